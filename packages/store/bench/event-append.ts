/**
 * Stream events (`/message/event`) on the embedded store, `sync=full`: `events` events
 * over `messages` messages (a stream's deltas), `inFlight` appends waiting at once, through
 * the store as the server opens it (the writer thread: the events of one event-loop turn in
 * one transaction) against, in the same run, the path the embedded store took before: a
 * transaction on the main connection per event (`createMessageEventRepository`, which
 * PostgreSQL and the in-memory store still use), its fsync on the event loop. Runs
 * alternate; each reports events/s and the process's CPU µs per event (every thread).
 *
 *   node --import tsx packages/store/bench/event-append.ts [events=4000] [messages=50] [inFlight=32] [rounds=2]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openEmbeddedStore, openSqlite, type MessageEvent } from '@parley/store';
import { createMessageEventRepository } from '../src/repositories/message-event.repository.ts';

const total = Number(process.argv[2] ?? 4_000);
const messages = Number(process.argv[3] ?? 50);
const inFlight = Number(process.argv[4] ?? 32);
const rounds = Number(process.argv[5] ?? 2);
for (const [name, v] of Object.entries({ total, messages, inFlight, rounds })) {
  if (!Number.isInteger(v) || v < 1) throw new Error(`${name} must be a positive whole number, got ${v}`);
}

type Append = (e: Omit<MessageEvent, 'eventSeq' | 'createdAt'>) => Promise<MessageEvent>;

async function measure(append: Append): Promise<{ perSec: number; cpuUs: number }> {
  let next = 0;
  const worker = async () => {
    for (let n = next++; n < total; n = next++) {
      await append({
        channelId: 'g1',
        channelType: 2,
        clientMsgNo: `ai-${n % messages}`,
        eventId: `e${n}`,
        eventKey: 'main',
        eventType: 'stream.delta',
        fromUid: 'bot',
        messageId: 2124331629039063041n + BigInt(n % messages),
        visibility: '',
        occurredAt: Date.now(),
        payload: '{"kind":"text","delta":"a token "}',
      });
    }
  };
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: inFlight }, worker));
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { perSec: (total / ms) * 1000, cpuUs: (cpu.user + cpu.system) / total };
}

async function writerThread() {
  const dir = mkdtempSync(join(tmpdir(), 'parley-event-bench-'));
  const store = await openEmbeddedStore({ dataDir: dir, sync: 'full' });
  try {
    return await measure((e) => store.events.append(e));
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function mainConnection() {
  const dir = mkdtempSync(join(tmpdir(), 'parley-event-bench-'));
  const db = await openSqlite({ dataDir: dir, sync: 'full' });
  try {
    const events = createMessageEventRepository(db, 'sqlite');
    return await measure((e) => events.append(e));
  } finally {
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

const fmt = (r: { perSec: number; cpuUs: number }) => `${(r.perSec / 1000).toFixed(1)}k events/s, ${r.cpuUs.toFixed(1)} µs CPU per event`;
console.log(`${total} stream events over ${messages} messages, ${inFlight} in flight, sync=full`);
for (let round = 1; round <= rounds; round++) {
  console.log(`  round ${round}: main connection (before) ${fmt(await mainConnection())}`);
  console.log(`  round ${round}: writer thread (current)  ${fmt(await writerThread())}`);
}
