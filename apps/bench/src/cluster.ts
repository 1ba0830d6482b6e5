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
import { gitRevision, machine } from './context.ts';
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

/** The highest step that held, counting up from the first (0 when the first did not). */
export function lifecycleRate(results: readonly ScenarioResult[]): { step: number; achieved: number } {
  let best = { step: 0, achieved: 0 };
  for (const r of results) {
    if (!holds(r)) break;
    best = { step: Number(r.scenario.split('@')[1]), achieved: r.figures.find((f) => f.key === 'achieved_rate')?.value ?? 0 };
  }
  return best;
}

/** Runs the cluster scenario; returns a JSON-ready document (the summary is printed by the CLI). */
export async function runClusterBench(o: BenchOptions & { clusterNodes: number }): Promise<Record<string, unknown>> {
  let driver: ClusterDriver | undefined;
  const started = Date.now();
  try {
    o.log(`cluster: starting ${o.clusterNodes} nodes (PostgreSQL + NATS)`);
    driver = await startParleyClusterDriver(o.clusterNodes, o.parleyNodeArgs);
    const users = oneToOneUsers(o.pairs, 'c1');
    await driver.provisionUsers(users);
    o.log(`cluster: ${o.pairs} pairs, steps ${CLUSTER_STEPS.join(',')} sends/s, ${o.phaseSeconds} s each`);
    const results = await runOneToOne(driver, { ...o, pairs: o.pairs, uidPrefix: 'c1', rates: CLUSTER_STEPS, continueWhile: holds });
    for (const r of results) r.scenario = r.scenario.replace(/^S1/, 'C1');
    const best = lifecycleRate(results);
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
        counts: r.counts,
      })),
    };
  } finally {
    await driver?.stop();
  }
}
