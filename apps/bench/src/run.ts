/**
 * One benchmark run: the sentinel, then for each scenario every target back to
 * back (a fresh server each, order alternating between scenarios), then the
 * sentinel again. Returns every result; never throws for a failing scenario.
 */
import { performance } from 'node:perf_hooks';
import { gitRevision, machine } from './context.ts';
import { makeResult, type ScenarioResult } from './result.ts';
import { compareSentinel, sentinelMs } from './sentinel.ts';
import { orderFor, runsScenario, startTarget } from './targets.ts';
import { runFanout, fanoutUsers } from './scenarios/fanout.ts';
import { runOfflineSync, offlineUsers } from './scenarios/offline-sync.ts';
import { runOneToOne, oneToOneUsers } from './scenarios/one-to-one.ts';
import { runStorm, stormUsers } from './scenarios/storm.ts';
import { pinningPlan } from './pinning.ts';
import type { Driver, TargetName } from './drivers/types.ts';

/** Every knob of a run (the CLI's options). */
export interface BenchOptions {
  scenarios: string[];
  targets: TargetName[];
  phaseSeconds: number;
  warmupSeconds: number;
  bodyBytes: number;
  stormCount: number;
  stormConcurrency: number;
  pairs: number;
  rates: number[];
  groups: number;
  members: number;
  groupRate: number;
  syncMessages: number;
  syncUsers: number;
  parleyNodeArgs: string[];
  /** `PARLEY_GC_THREADS` as Parley's launcher sees it (auto: single-threaded GC on the one pinned core). */
  parleyGcThreads: string;
  /** The calibration loop's folder. */
  refImDir: string;
  /** `--perf DIR`: Parley servers sampled by `perf record`. */
  perfDir?: string;
  /** `--perf-hz N`: the sampling rate of `--perf`. */
  perfHz?: number;
  /** S4 connects started per second (paced, at most `stormConcurrency` in flight). */
  stormRate: number;
  /** S4 connects made and closed before the measured storm (0: the storm meets a fresh server). */
  stormWarmup: number;
  log: (line: string) => void;
}

/** What starting a target needs from the options. */
export function targetOptions(o: BenchOptions, perfTag: string) {
  return { parleyNodeArgs: o.parleyNodeArgs, refImDir: o.refImDir, perfDir: o.perfDir, perfHz: o.perfHz, perfTag, log: o.log };
}

interface ScenarioSpec {
  /** Result ids this scenario produces (for error rows). */
  ids: (o: BenchOptions) => string[];
  users: (o: BenchOptions) => string[];
  run: (d: Driver, o: BenchOptions) => Promise<ScenarioResult[]>;
}

/** The scenarios by name, in the default run order. */
export const SCENARIOS: Record<string, ScenarioSpec> = {
  S4: {
    ids: () => ['S4'],
    users: (o) => stormUsers(o.stormCount),
    run: async (d, o) => [
      await runStorm(d, {
        ...o,
        count: o.stormCount,
        concurrency: o.stormConcurrency,
        rate: o.stormRate,
        warmup: o.stormWarmup,
        settleMs: 1500,
      }),
    ],
  },
  S1: {
    ids: (o) => o.rates.map((r) => `S1@${r}`),
    users: (o) => oneToOneUsers(o.pairs),
    run: (d, o) => runOneToOne(d, { ...o, pairs: o.pairs, rates: o.rates }),
  },
  S2: {
    ids: () => ['S2'],
    users: (o) => fanoutUsers(o.groups, o.members),
    run: (d, o) => runFanout(d, { ...o, groups: o.groups, members: o.members, rates: [o.groupRate] }),
  },
  S3: {
    ids: () => ['S3'],
    users: (o) => offlineUsers(o.syncUsers),
    run: async (d, o) => [await runOfflineSync(d, { ...o, messages: o.syncMessages, users: o.syncUsers, concurrency: 10 })],
  },
};

/** Runs one scenario against one fresh target; failures become error results. */
export async function runOne(name: string, target: TargetName, o: BenchOptions): Promise<ScenarioResult[]> {
  const spec = SCENARIOS[name]!;
  let driver: Driver | undefined;
  try {
    const t0 = performance.now();
    driver = await startTarget(target, targetOptions(o, name));
    const t1 = performance.now();
    await driver.provisionUsers(spec.users(o));
    const t2 = performance.now();
    const results = await spec.run(driver, o);
    // Alerts the server raised over the scenario (a fresh node under the bench's load should raise none that are critical).
    const alerts = (await driver.alerts?.().catch(() => undefined)) ?? {};
    for (const r of results) Object.assign(r.counts, { setupStartS: (t1 - t0) / 1000, setupUsersS: (t2 - t1) / 1000 }, alerts);
    const critical = Object.keys(alerts).filter((k) => k.startsWith('alerts.critical:'));
    if (critical.length > 0) o.log(`  ${target} ${name}: critical alerts raised: ${critical.map((k) => k.slice(16)).join(', ')}`);
    o.log(
      `  ${target} ${name}: start ${((t1 - t0) / 1000).toFixed(1)} s, users ${((t2 - t1) / 1000).toFixed(1)} s, scenario ${((performance.now() - t2) / 1000).toFixed(1)} s`,
    );
    return results;
  } catch (e) {
    o.log(`  ${target} ${name} failed: ${(e as Error).stack ?? e}`);
    return spec
      .ids(o)
      .map((id) => makeResult({ scenario: id, title: id, target, figures: [], gates: [], counts: {}, error: (e as Error).message }));
  } finally {
    await driver?.stop();
  }
}

/** The whole run with its context (the JSON document minus the derived reports). */
export interface RunOutcome {
  startedAt: string;
  durationS: number;
  git: string | undefined;
  machine: Record<string, unknown>;
  pinning: { enabled: boolean; warning?: string };
  sentinel: { beforeMs: number; afterMs: number; difference: number; noisy: boolean };
  results: ScenarioResult[];
  durability: Record<string, string>;
}

/** Runs the sentinel, every scenario × target, and the sentinel again. */
export async function runBench(o: BenchOptions): Promise<RunOutcome> {
  const started = Date.now();
  const beforeMs = sentinelMs();
  o.log(`sentinel before: ${beforeMs.toFixed(1)} ms`);
  const results: ScenarioResult[] = [];
  const durability: Record<string, string> = {};
  for (const [i, name] of o.scenarios.entries()) {
    const order = orderFor(i, o.targets).filter((t) => runsScenario(t, name));
    o.log(`${name}: ${order.join(' → ')}`);
    for (const target of order) results.push(...(await runOne(name, target, o)));
  }
  durability.mosquitto = 'QoS 1 publish and subscriptions; PUBACK sent from memory (persistence false)';
  durability.parley = 'SENDACK / send result after the group commit is fsynced (store.sync=full, the default)';
  if (o.targets.includes('ref-im')) durability['ref-im'] = 'result after its WAL transaction is fsynced (synchronous=FULL)';
  const afterMs = sentinelMs();
  o.log(`sentinel after: ${afterMs.toFixed(1)} ms`);
  return {
    startedAt: new Date(started).toISOString(),
    durationS: (Date.now() - started) / 1000,
    git: gitRevision(),
    machine: machine(),
    pinning: pinningPlan(),
    sentinel: { beforeMs, afterMs, ...compareSentinel(beforeMs, afterMs) },
    results,
    durability,
  };
}
