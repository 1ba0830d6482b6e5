/**
 * S4 — connection storm: `count` authenticated connections, started at a
 * fixed pace of `rate` per second with at most `concurrency` connects in
 * flight. Paced, not as fast as possible: in a closed loop the generator
 * (one core, a full client stack per connect) saturates before a fast server
 * does, and the figures would measure the generator.
 * With `warmup`, that many connects are made and closed first (not measured).
 * Figures: connections/s, connect→ack p50/p99, server CPU per 1k connections,
 * RSS per connection (RSS growth over the idle server ÷ count, after a settle
 * pause: neither server can be told to collect garbage from outside).
 */
import { startCpuMeter, rssKb } from '../proc-stats.ts';
import { achievedGate, fig, generatorGate, makeResult, type ScenarioResult } from '../result.ts';
import { pool, Samples, sleep } from '../stats.ts';
import { closeAll, type ScenarioOptions } from './common.ts';
import { IGNORED, type Connection, type Driver } from '../drivers/types.ts';

/** Parameters of S4. */
export interface StormOptions extends ScenarioOptions {
  count: number;
  concurrency: number;
  /** Connects started per second. */
  rate: number;
  /**
   * Connects made (unpaced, at `concurrency`) and closed before the measured storm, in rounds
   * of at most `count` with the storm's own uids; 0: none. A fresh Node process compiles its
   * connect path with the storm (the optimizing compiler's threads were a quarter of the
   * server's CPU in a 2,000-connect storm), so without it S4 measures a cold server, with a
   * few thousand a warm one.
   */
  warmup: number;
  /** Pause before each RSS reading so lazily freed memory settles, ms. */
  settleMs: number;
}

/** Pause after each warm-up round, so the server has closed that round's sessions before the next, ms. */
const WARMUP_ROUND_PAUSE_MS = 500;

/** The uids of S4. */
export function stormUsers(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `s4u${i}`);
}

/** Runs S4 against a started, provisioned target. */
export async function runStorm(driver: Driver, o: StormOptions): Promise<ScenarioResult> {
  const uids = stormUsers(o.count);
  if (o.warmup > 0) o.log(`  ${driver.name} S4 warm-up: ${o.warmup} connects, made and closed`);
  let warmupConnects = 0;
  while (warmupConnects < o.warmup) {
    const round = new Map<string, Connection>();
    let roundError: string | undefined;
    await pool(uids.slice(0, Math.min(o.count, o.warmup - warmupConnects)), o.concurrency, async (uid) => {
      try {
        round.set(uid, await driver.connect(uid, IGNORED));
      } catch (e) {
        roundError ??= (e as Error).message;
      }
    });
    closeAll(round);
    if (roundError !== undefined) throw new Error(`S4 warm-up: a connect failed: ${roundError}`);
    warmupConnects += round.size;
    await sleep(WARMUP_ROUND_PAUSE_MS);
  }
  await sleep(o.settleMs);
  const rssBefore = rssKb(driver.pid);
  const latency = new Samples();
  const conns = new Map<string, Connection>();
  let failed = 0;
  let firstError: string | undefined;
  o.log(`  ${driver.name} S4 storm of ${o.count} connections`);
  const meter = startCpuMeter(driver.pid);
  try {
    const start = performance.now();
    let started = 0;
    await pool(uids, o.concurrency, async (uid) => {
      const due = start + (started++ * 1000) / o.rate;
      const wait = due - performance.now();
      if (wait > 1) await sleep(wait);
      const t0 = performance.now();
      try {
        conns.set(uid, await driver.connect(uid, IGNORED));
        latency.add(performance.now() - t0);
      } catch (e) {
        failed++;
        firstError ??= (e as Error).message;
      }
    });
    const cpu = meter.read();
    await sleep(o.settleMs);
    const rssAfter = rssKb(driver.pid);
    const rate = (conns.size * 1000) / cpu.wallMs;
    return makeResult({
      scenario: 'S4',
      title: `S4 connection storm, ${o.count} authenticated connections at ${o.rate}/s`,
      target: driver.name,
      figures: [
        fig('connections_per_s', 'connections/s', 'conn/s', rate, 'higher'),
        fig('connect_p50_ms', 'connect→ack p50', 'ms', latency.percentile(50)),
        fig('connect_p99_ms', 'connect→ack p99', 'ms', latency.percentile(99)),
        fig('cpu_ms_per_1k_conns', 'server CPU per 1k conns', 'ms', conns.size > 0 ? (cpu.serverMs * 1000) / conns.size : undefined),
        fig('rss_kb_per_conn', 'RSS per idle conn', 'KiB', conns.size > 0 ? (rssAfter - rssBefore) / conns.size : undefined),
        fig('rss_mb_total', 'server RSS with all conns', 'MiB', rssAfter / 1024),
      ],
      gates: [
        generatorGate(cpu.generatorMs, cpu.wallMs),
        achievedGate(conns.size, o.count, 'connections'),
        { name: 'loss', ok: failed === 0, detail: failed === 0 ? 'every connection authenticated' : `${failed} failed: ${firstError}` },
      ],
      counts: {
        connections: conns.size,
        failed,
        warmupConnects,
        rssBeforeKb: rssBefore,
        rssAfterKb: rssAfter,
        serverCpuMs: cpu.serverMs,
        generatorCpuMs: cpu.generatorMs,
        wallMs: cpu.wallMs,
        serverWaitMs: cpu.serverWaitMs,
        generatorWaitMs: cpu.generatorWaitMs,
      },
    });
  } finally {
    closeAll(conns);
  }
}
