/**
 * S3 — offline sync: `messages` messages from one sender spread over `users`
 * offline receivers, then every receiver catches up (Parley: HTTP
 * /channel/messagesync pages; mosquitto: reconnecting its persistent QoS 1
 * session). Figures: rows/s and server CPU per 1k rows of the catch-up phase.
 * Before it, unmeasured, a warm-up round of the same shape (one batch of
 * `concurrency` users, a tenth of the messages) catches up once, so that the
 * measured phase does not include compiling the catch-up path (V8's
 * optimising compiler ran on the generator's core, which alone kept
 * mosquitto's short catch-up over the generator-cpu gate; Parley's server is
 * warmed the same way).
 */
import { performance } from 'node:perf_hooks';
import { Ledger, encodeBody } from '../ledger.ts';
import { startCpuMeter } from '../proc-stats.ts';
import { fig, generatorGate, ledgerGates, makeResult, type ScenarioResult } from '../result.ts';
import { pool } from '../stats.ts';
import { generatorCpuCounts, type ScenarioOptions } from './common.ts';
import { IGNORED, type Driver } from '../drivers/types.ts';

/** Parameters of S3. */
export interface OfflineSyncOptions extends ScenarioOptions {
  messages: number;
  users: number;
  /** Receivers catching up at once. */
  concurrency: number;
}

const SENDER = 's3src';
const receiverOf = (i: number): string => `s3u${i}`;
/** Warm-up receivers: as many as catch up at once in the measured phase. */
const warmOf = (i: number): string => `s3w${i}`;
const WARM_USERS = 10;

/** The uids of S3 (the sender, the receivers and the warm-up receivers). */
export function offlineUsers(users: number): string[] {
  return [SENDER, ...Array.from({ length: users }, (_, i) => receiverOf(i)), ...Array.from({ length: WARM_USERS }, (_, i) => warmOf(i))];
}

/**
 * Sends `messages` to `receivers` (round robin, prepared offline before), then
 * has all of them catch up, `concurrency` at a time, each delivery into `ledger`;
 * the catch-up alone runs under `measure`. The warm-up and the measured round
 * run this same code (the same closures), so that what V8 optimised in the
 * warm-up stays valid in the measured round instead of being deoptimised and
 * compiled again on the generator's core while it is measured.
 */
async function backlogAndCatchUp<T>(
  driver: Driver,
  o: OfflineSyncOptions,
  receivers: readonly string[],
  messages: number,
  ledger: Ledger,
  measure: (catchUp: () => Promise<void>) => Promise<T>,
): Promise<T> {
  for (const r of receivers) {
    ledger.expect(`s3:${r}`, [r]);
    await driver.prepareOffline(r);
  }
  const sender = await driver.connect(SENDER, IGNORED);
  try {
    // The backlog, 200 sends in flight; not measured.
    await pool(
      Array.from({ length: messages }, (_, i) => i),
      200,
      async (i) => {
        const to = receivers[i % receivers.length]!;
        const stream = `s3:${to}`;
        await sender.send({ kind: 'user', id: to }, encodeBody(stream, ledger.next(stream), performance.now(), o.bodyBytes));
      },
    );
  } finally {
    sender.close();
  }
  const n = receivers.length;
  const expectedFor = (i: number): number => Math.floor(messages / n) + (i < messages % n ? 1 : 0);
  return measure(() => pool(receivers, o.concurrency, (uid, i) => driver.catchUp(uid, SENDER, expectedFor(i), ledger.recipient(uid))));
}

/** Fills the receivers' backlogs while they are offline, then times their catch-up. */
export async function runOfflineSync(driver: Driver, o: OfflineSyncOptions): Promise<ScenarioResult> {
  const warm = new Ledger();
  const warmUsers = Array.from({ length: Math.min(WARM_USERS, o.concurrency) }, (_, i) => warmOf(i));
  o.log(`  ${driver.name} S3 warm-up: ${Math.ceil(o.messages / 10)} messages to ${warmUsers.length} offline users`);
  await backlogAndCatchUp(driver, o, warmUsers, Math.ceil(o.messages / 10), warm, (catchUp) => catchUp());
  const w = warm.verdict();
  if (w.lost + w.duplicates + w.outOfOrder + w.foreign > 0) throw new Error(`S3 warm-up catch-up: ${JSON.stringify(w)}`);

  const ledger = new Ledger();
  const receivers = Array.from({ length: o.users }, (_, i) => receiverOf(i));
  o.log(`  ${driver.name} S3 ${o.messages} messages to ${o.users} offline users`);
  const cpu = await backlogAndCatchUp(driver, o, receivers, o.messages, ledger, async (catchUp) => {
    const meter = startCpuMeter(driver.pid, 'catch-up');
    await catchUp();
    return meter.read();
  });
  const v = ledger.verdict();
  const rows = ledger.recordedDeliveries;
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
      ...generatorCpuCounts(cpu.generatorBreakdownMs),
    },
  });
}
