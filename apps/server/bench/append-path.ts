/**
 * Measures the durable append path alone (AppendQueue → SQLite group commit)
 * with a 1:1-shaped load: many channels, a distinct sender per message, every
 * send carrying a client_msg_no. Prints messages/s and CPU µs per message.
 *
 *   node --import tsx apps/server/bench/append-path.ts [messages] [channels] [in-flight]
 *
 * `PARLEY_STORE_SQLITE_WAL_BUFFER` (auto, on, off) sets the store's WAL buffer as the server's
 * option does.
 */
import process from 'node:process';
import { performance } from 'node:perf_hooks';
import { Buffer } from 'node:buffer';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppendQueue } from '../src/messaging/append-queue.ts';
import { openEmbeddedStore, type WalBufferMode } from '@parley/store';

const total = Number(process.argv[2] ?? 20_000);
const channels = Number(process.argv[3] ?? 1_000);
/** Sends waiting for their commit at once: the batch size under load. */
const inFlight = Number(process.argv[4] ?? 500);

/** `store.sqlite_wal_buffer` (`PARLEY_STORE_SQLITE_WAL_BUFFER`: auto, on or off; default auto), for alternated runs of both. */
const walBuffer = (process.env.PARLEY_STORE_SQLITE_WAL_BUFFER ?? 'auto') as WalBufferMode;
if (!['auto', 'on', 'off'].includes(walBuffer)) throw new Error(`PARLEY_STORE_SQLITE_WAL_BUFFER must be auto, on or off, got ${walBuffer}`);

const dir = mkdtempSync(join(tmpdir(), 'parley-append-bench-'));
const store = await openEmbeddedStore({ dataDir: dir, sync: 'full', walBuffer });
const queue = new AppendQueue(store.messages, 512);
const payload = Buffer.from(JSON.stringify({ type: 1, content: 'hello, this is a benchmark message' }));

let next = 0;
let id = 1n << 40n;
async function worker(): Promise<void> {
  while (next < total) {
    const n = next++;
    const c = n % channels;
    await queue.append(
      {
        channelId: `u${c}@v${c}`,
        channelType: 1,
        messageId: id++,
        clientMsgNo: `cmn-${n}`,
        fromUid: `u${c}`,
        setting: 0,
        flags: 2,
        expire: 0,
        topic: '',
        createdAt: Date.now(),
        payload,
      },
      true,
    );
  }
}

const cpu0 = process.cpuUsage();
const t0 = performance.now();
await Promise.all(Array.from({ length: inFlight }, worker));
const ms = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
console.log(
  JSON.stringify({
    messages: total,
    in_flight: inFlight,
    batches: queue.stats.batches,
    msgs_per_sec: Math.round(total / (ms / 1000)),
    cpu_us_per_msg: Number(((cpu.user + cpu.system) / total).toFixed(1)),
    wall_ms: Math.round(ms),
  }),
);
await store.close();
rmSync(dir, { recursive: true, force: true });
