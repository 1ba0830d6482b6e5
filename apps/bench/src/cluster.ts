/**
 * `--cluster`: the cluster scenario (not in the default run). Three Parley
 * nodes (`--cluster-nodes`) on this machine share the local PostgreSQL and
 * NATS; `--pairs` online 1:1 pairs, users spread over the nodes, send open
 * loop at rising rates (one phase each). Every message lives its whole
 * lifecycle — send, durable commit at its slot's owner, sendack, RECV on the
 * recipient's node, recvack — and the ledger checks loss, duplicates and
 * order. Reports the highest rate whose phase was valid with sendack p99 at
 * most 200 ms (the "lifecycle sends/s").
 */
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { gitRevision, machine } from './context.ts';
import { cpuMs } from './proc-stats.ts';
import { compareSentinel, sentinelMs } from './sentinel.ts';
import { startParleyClusterDriver, type ClusterDriver } from './drivers/parley-cluster.ts';
import type { ScenarioResult } from './result.ts';
import type { BenchOptions } from './run.ts';
import { oneToOneUsers, runOneToOne } from './scenarios/one-to-one.ts';

/** sendack p99 a step must stay at or under, ms. */
export const CLUSTER_P99_MS = 200;
/** The steps, sends/s over the whole cluster. */
export const CLUSTER_STEPS = [500, 1000, 1500, 2000, 2500, 3000, 4000, 5000];

const p99Of = (r: ScenarioResult): number | null => r.figures.find((f) => f.key === 'sendack_p99_ms')?.value ?? null;
const holds = (r: ScenarioResult): boolean => {
  const p99 = p99Of(r);
  return r.valid && p99 !== null && p99 <= CLUSTER_P99_MS;
};

/** Pids of every running process named `name` (PostgreSQL's backends, nats-server). */
function pidsOf(name: string): number[] {
  try {
    return execFileSync('pgrep', ['-x', name], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l !== '')
      .map(Number);
  } catch {
    return [];
  }
}

/** CPU ms (user + system) of each group of processes; a process gone since is counted as 0. */
function cpuOfGroups(groups: Record<string, readonly number[]>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, pids] of Object.entries(groups)) {
    out[name] = pids.reduce((t, pid) => {
      try {
        return t + cpuMs(pid);
      } catch {
        return t;
      }
    }, 0);
  }
  return out;
}

/** The highest step that held, counting up from the first (0 when the first did not). */
export function lifecycleRate(results: readonly ScenarioResult[]): { step: number; achieved: number } {
  let best = { step: 0, achieved: 0 };
  for (const r of results) {
    if (!holds(r)) break;
    best = { step: Number(r.scenario.split('@')[1]), achieved: r.figures.find((f) => f.key === 'achieved_rate')?.value ?? 0 };
  }
  return best;
}

/** CPU ms per 1k acknowledged messages, by process group, over one phase. */
function cpuPer1k(p: { before: Record<string, number>; after?: Record<string, number> } | undefined, acked: number) {
  if (!p?.after || acked === 0) return undefined;
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(p.after)) out[k] = Math.round(((v - (p.before[k] ?? 0)) * 1000) / acked);
  return out;
}

/** Runs the cluster scenario; returns a JSON-ready document (the summary is printed by the CLI). */
export async function runClusterBench(o: BenchOptions & { clusterNodes: number }): Promise<Record<string, unknown>> {
  let driver: ClusterDriver | undefined;
  const started = Date.now();
  const beforeMs = sentinelMs();
  const loadBefore = loadavg();
  try {
    o.log(`cluster: starting ${o.clusterNodes} nodes (PostgreSQL + NATS)`);
    driver = await startParleyClusterDriver(o.clusterNodes, o.parleyNodeArgs);
    const users = oneToOneUsers(o.pairs, 'c1');
    await driver.provisionUsers(users);
    o.log(`cluster: ${o.pairs} pairs, steps ${CLUSTER_STEPS.join(',')} sends/s, ${o.phaseSeconds} s each`);
    // CPU of every process taking part (the nodes, PostgreSQL's backends, NATS) per phase: what a message costs the cluster.
    const nodes = driver.nodes;
    const groups = (): Record<string, number[]> => ({
      nodes: nodes.map((n) => n.pid),
      postgres: pidsOf('postgres'),
      nats: pidsOf('nats-server'),
    });
    const phaseCpu = new Map<number, { before: Record<string, number>; pids: Record<string, number[]>; after?: Record<string, number> }>();
    const results = await runOneToOne(driver, {
      ...o,
      pairs: o.pairs,
      uidPrefix: 'c1',
      rates: CLUSTER_STEPS,
      continueWhile: holds,
      onPhase(rate, at) {
        if (at === 'start') {
          const pids = groups();
          phaseCpu.set(rate, { before: cpuOfGroups(pids), pids });
        } else {
          const p = phaseCpu.get(rate)!;
          p.after = cpuOfGroups(p.pids);
        }
      },
    });
    for (const r of results) r.scenario = r.scenario.replace(/^S1/, 'C1');
    const best = lifecycleRate(results);
    const afterMs = sentinelMs();
    const sentinel = { beforeMs, afterMs, ...compareSentinel(beforeMs, afterMs) };
    o.log(`cluster: lifecycle ${best.step} sends/s held (achieved ${best.achieved.toFixed(0)}/s) at sendack p99 ≤ ${CLUSTER_P99_MS} ms`);
    return {
      tool: 'parley-bench',
      mode: 'cluster',
      git: gitRevision(),
      machine: machine(),
      nodes: o.clusterNodes,
      pairs: o.pairs,
      p99LimitMs: CLUSTER_P99_MS,
      lifecycleSendsPerSec: best.step,
      achievedAtThatStep: best.achieved,
      durationS: (Date.now() - started) / 1000,
      durability: driver.durability,
      steps: results.map((r) => ({
        scenario: r.scenario,
        valid: r.valid,
        sendackP50Ms: r.figures.find((f) => f.key === 'sendack_p50_ms')?.value ?? null,
        sendackP99Ms: p99Of(r),
        recvP99Ms: r.figures.find((f) => f.key === 'recv_p99_ms')?.value ?? null,
        achieved: r.figures.find((f) => f.key === 'achieved_rate')?.value ?? null,
        failedGates: r.gates.filter((g) => !g.ok).map((g) => `${g.name}: ${g.detail}`),
        cpuMsPer1kMsgs: cpuPer1k(phaseCpu.get(Number(r.scenario.split('@')[1])), r.counts.acked ?? 0),
        counts: r.counts,
      })),
      sentinel,
      tag: sentinel.noisy ? 'noisy' : 'quiet',
      loadAverage: { before: loadBefore, after: loadavg() },
    };
  } finally {
    await driver?.stop();
  }
}
