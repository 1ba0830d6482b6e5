/**
 * S3 — offline sync: `messages` messages from one sender spread over `users`
 * offline receivers, then every receiver catches up (Parley: HTTP
 * /channel/messagesync pages; mosquitto: reconnecting its persistent QoS 1
 * session). Figures: rows/s and server CPU per 1k rows of the catch-up phase.
 */
import { Ledger, encodeBody } from '../ledger.ts';
import { startCpuMeter } from '../proc-stats.ts';
import { fig, generatorGate, ledgerGates, makeResult, type ScenarioResult } from '../result.ts';
import { pool } from '../stats.ts';
import { type ScenarioOptions } from './common.ts';
import type { Driver } from '../drivers/types.ts';

/** Parameters of S3. */
export interface OfflineSyncOptions extends ScenarioOptions {
  messages: number;
  users: number;
  /** Receivers catching up at once. */
  concurrency: number;
}

const SENDER = 's3src';
const receiverOf = (i: number): string => `s3u${i}`;

/** The uids of S3 (the sender and the receivers). */
export function offlineUsers(users: number): string[] {
  return [SENDER, ...Array.from({ length: users }, (_, i) => receiverOf(i))];
}

/** Fills the receivers' backlogs while they are offline, then times their catch-up. */
export async function runOfflineSync(driver: Driver, o: OfflineSyncOptions): Promise<ScenarioResult> {
  const ledger = new Ledger();
  const receivers = Array.from({ length: o.users }, (_, i) => receiverOf(i));
  for (const r of receivers) {
    ledger.expect(`s3:${r}`, [r]);
    await driver.prepareOffline(r);
  }
  o.log(`  ${driver.name} S3 ${o.messages} messages to ${o.users} offline users`);
  const sender = await driver.connect(SENDER, () => undefined);
  try {
    // The backlog, 200 sends in flight; not measured.
    await pool(
      Array.from({ length: o.messages }, (_, i) => i),
      200,
      async (i) => {
        const to = receivers[i % o.users]!;
        const stream = `s3:${to}`;
        await sender.send({ kind: 'user', id: to }, encodeBody(stream, ledger.next(stream), performance.now(), o.bodyBytes));
      },
    );
  } finally {
    sender.close();
  }
  const expectedFor = (i: number): number => Math.floor(o.messages / o.users) + (i < o.messages % o.users ? 1 : 0);
  const meter = startCpuMeter(driver.pid);
  let rows = 0;
  await pool(receivers, o.concurrency, (uid, i) =>
    driver.catchUp(uid, SENDER, expectedFor(i), (body) => {
      rows++;
      ledger.receive(uid, body);
    }),
  );
  const cpu = meter.read();
  const v = ledger.verdict();
  return makeResult({
    scenario: 'S3',
    title: `S3 offline sync, ${o.messages} messages to ${o.users} offline users`,
    target: driver.name,
    figures: [
      fig('rows_per_s', 'catch-up rows/s', 'rows/s', (rows * 1000) / cpu.wallMs, 'higher'),
      fig('cpu_ms_per_1k_rows', 'server CPU per 1k rows', 'ms', rows > 0 ? (cpu.serverMs * 1000) / rows : undefined),
      fig('catchup_ms', 'catch-up wall time', 'ms', cpu.wallMs),
    ],
    gates: [generatorGate(cpu.generatorMs, cpu.wallMs), ...ledgerGates(v)],
    counts: {
      messages: o.messages,
      rows,
      expected: v.expected,
      lost: v.lost,
      duplicates: v.duplicates,
      outOfOrder: v.outOfOrder,
      serverCpuMs: cpu.serverMs,
      generatorCpuMs: cpu.generatorMs,
      wallMs: cpu.wallMs,
      serverWaitMs: cpu.serverWaitMs,
      generatorWaitMs: cpu.generatorWaitMs,
    },
  });
}
