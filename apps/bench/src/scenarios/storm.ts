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
 * Each round of connects (the storm, a warm-up round) has a time limit: its
 * schedule plus `graceMs`. A round still waiting then ends at once: the
 * storm's result fails its `deadline` gate, a warm-up fails the scenario,
 * and either says how many connects were waiting and what the server's
 * threads were doing.
 */
import { performance } from 'node:perf_hooks';
import { startCpuMeter, rssKb, threadStates } from '../proc-stats.ts';
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
  /** How long a round may run past its schedule before it ends as stuck, ms (default {@link STORM_GRACE_MS}). */
  graceMs?: number;
}

/**
 * Default time a round of connects may take beyond its schedule, ms: more than one connect's
 * own limits (10 s for the TCP or WebSocket connect and 10 s for the CONNACK or connect result),
 * so that a round ends as stuck only when connects wait past their own time limits, or the
 * server answers so slowly that the storm measures nothing useful anyway.
 */
export const STORM_GRACE_MS = 30_000;

/** Pause after each warm-up round, so the server has closed that round's sessions before the next, ms. */
const WARMUP_ROUND_PAUSE_MS = 500;

/** The uids of S4. */
export function stormUsers(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `s4u${i}`);
}

/** What one round of connects did. */
interface Round {
  conns: Map<string, Connection>;
  failed: number;
  firstError?: string;
  /** Why the round ended before every connect settled (its time limit), with what was waiting. */
  stuck?: string;
}

/**
 * Connects `uids` at most `concurrency` at a time, paced at `rate` per second when given, for
 * at most `limitMs`: past it no connect starts, a connect that still succeeds is closed, and
 * the round ends at once with `stuck` set (the connects still waiting settle by their own limits).
 */
async function connectRound(
  driver: Driver,
  uids: readonly string[],
  concurrency: number,
  limitMs: number,
  rate?: number,
  latency?: Samples,
): Promise<Round> {
  const round: Round = { conns: new Map(), failed: 0 };
  const waiting = new Set<string>();
  let stopped = false;
  let scheduled = 0;
  let begun = 0;
  const start = performance.now();
  const work = pool(uids, concurrency, async (uid) => {
    if (rate !== undefined) {
      const wait = start + (scheduled++ * 1000) / rate - performance.now();
      if (wait > 1) await sleep(wait);
    }
    if (stopped) return;
    begun++;
    waiting.add(uid);
    const t0 = performance.now();
    try {
      const conn = await driver.connect(uid, IGNORED);
      if (stopped) conn.close();
      else {
        round.conns.set(uid, conn);
        latency?.add(performance.now() - t0);
      }
    } catch (e) {
      if (!stopped) {
        round.failed++;
        round.firstError ??= (e as Error).message;
      }
    } finally {
      waiting.delete(uid);
    }
  });
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(true), limitMs);
  });
  const timedOut = await Promise.race([work.then(() => false), expired]);
  clearTimeout(timer);
  if (timedOut) {
    stopped = true;
    const first = [...waiting].slice(0, 3).join(', ');
    round.stuck =
      `${waiting.size} of ${uids.length} connects still waiting ${Math.round(limitMs)} ms after the round began ` +
      `(${round.conns.size} made, ${round.failed} failed, ${uids.length - begun} not started${first ? `; waiting: ${first}` : ''}` +
      `${round.firstError ? `; first failure: ${round.firstError}` : ''}); server threads: ${threadStates(driver.pid)}`;
  }
  return round;
}

/** Runs S4 against a started, provisioned target. */
export async function runStorm(driver: Driver, o: StormOptions): Promise<ScenarioResult> {
  const uids = stormUsers(o.count);
  const graceMs = o.graceMs ?? STORM_GRACE_MS;
  if (o.warmup > 0) o.log(`  ${driver.name} S4 warm-up: ${o.warmup} connects, made and closed`);
  let warmupConnects = 0;
  while (warmupConnects < o.warmup) {
    const size = Math.min(o.count, o.warmup - warmupConnects);
    // Unpaced, but given as long as the storm's pace would take, and the grace.
    const round = await connectRound(driver, uids.slice(0, size), o.concurrency, (size * 1000) / o.rate + graceMs);
    closeAll(round.conns);
    if (round.stuck !== undefined) throw new Error(`S4 warm-up round did not end: ${round.stuck}`);
    if (round.firstError !== undefined) throw new Error(`S4 warm-up: a connect failed: ${round.firstError}`);
    warmupConnects += round.conns.size;
    await sleep(WARMUP_ROUND_PAUSE_MS);
  }
  // What the coming connects would each make on the generator's side alone (WKProto: key pairs),
  // made now, so that the storm's generator CPU is the connects' own work.
  const prepared = driver.prepareConnects?.(o.count);
  if (prepared !== undefined) o.log(`  ${driver.name} S4: ${prepared}, made before the storm`);
  await sleep(o.settleMs);
  const rssBefore = rssKb(driver.pid);
  const latency = new Samples();
  let conns = new Map<string, Connection>();
  o.log(`  ${driver.name} S4 storm of ${o.count} connections`);
  const meter = startCpuMeter(driver.pid, 'storm');
  try {
    const limitMs = (o.count * 1000) / o.rate + graceMs;
    const storm = await connectRound(driver, uids, o.concurrency, limitMs, o.rate, latency);
    conns = storm.conns;
    const { failed, firstError, stuck } = storm;
    if (stuck !== undefined) o.log(`  ${driver.name} S4 storm did not end: ${stuck}`);
    const cpu = meter.read();
    if (stuck === undefined) await sleep(o.settleMs);
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
        {
          name: 'deadline',
          ok: stuck === undefined,
          detail: stuck ?? `every connect ended within the storm's schedule and ${graceMs / 1000} s`,
        },
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
