/**
 * `parley-bench`: the side-by-side benchmark of Parley against mosquitto.
 * Prints progress on stderr, then the table and one JSON document on stdout.
 */
import process from 'node:process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { installCleanup } from './children.ts';
import { pinSelf, pinningPlan } from './pinning.ts';
import { buildReports, renderProblems, renderTable } from './report.ts';
import { runBench, SCENARIOS, type BenchOptions } from './run.ts';
import { runCapacity } from './capacity.ts';
import { CLUSTER_P99_MS, runClusterBench } from './cluster.ts';
import { ALL_TARGETS } from './targets.ts';
import { DEFAULT_REF_IM_DIR } from './drivers/ref-im.ts';
import type { TargetName } from './drivers/types.ts';

/** The time a default run should take, s; longer runs say so in the output. */
const TIME_BOUND_S = 120;

const HELP = `parley-bench [options]   (defaults = the issue's scenario sizes, about 2 minutes)
  --scenarios S4,S1,S2,S3   which scenarios, in this order
  --targets mosquitto,parley-jsonrpc,parley-wkproto,ref-im   (ref-im: the calibration loop, S1 only)
  --seconds N               seconds per measured open-loop phase (3)
  --warmup N                seconds of unmeasured warm-up before S1 and S2 (1)
  --storm N                 S4 connections (2000)          --storm-concurrency N (50)
  --storm-rate N            S4 connects started per second (1000)
  --storm-warmup N          S4 connects made and closed before the measured storm, in rounds of at
                            most --storm (0: the storm meets a fresh server; 4000: a warm one)
  --pairs N                 S1 pairs (500)                 --rates 2000,5000
  --groups N --members N    S2 groups × members (5 × 200)  --group-rate N msg/s (50)
  --sync-messages N         S3 messages (50000)            --sync-users N (100)
  --body-bytes N            payload bytes (64)
  --cpu-prof DIR            run Parley under node --cpu-prof, profiles written to DIR
  --perf DIR                sample each Parley server with perf record (kernel and native frames;
                            node --perf-prof and perf inject --jit name the JS ones) into
                            DIR/<target>-<scenario>-*.perf.data, its measured phases in *.perf.data.phases
  --perf-hz N               perf's samples a second with --perf (499; at most 10000)
  --parley-node-args=ARGS   extra node options for each Parley server, space-separated
                            (e.g. --parley-node-args=--single-threaded-gc); recorded in the JSON options
  --ref-im DIR              the calibration loop's folder (target ref-im; default: tools/ref-im of the shared folder)
  --json FILE               also write the JSON document to FILE
  --capacity                the staircase instead (1:1 2k…12k, groups 50…300 msg/s)
  --cluster                 the cluster scenario instead: --cluster-nodes (3) nodes on PostgreSQL + NATS,
                            --pairs 1:1 pairs at 500…5000 sends/s until sendack p99 > 200 ms
  --help`;

const { values } = parseArgs({
  options: {
    scenarios: { type: 'string', default: 'S4,S1,S2,S3' },
    targets: { type: 'string', default: ALL_TARGETS.join(',') },
    seconds: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '1' },
    storm: { type: 'string', default: '2000' },
    'storm-concurrency': { type: 'string', default: '50' },
    'storm-rate': { type: 'string', default: '1000' },
    'storm-warmup': { type: 'string', default: '0' },
    pairs: { type: 'string', default: '500' },
    rates: { type: 'string', default: '2000,5000' },
    groups: { type: 'string', default: '5' },
    members: { type: 'string', default: '200' },
    'group-rate': { type: 'string', default: '50' },
    'sync-messages': { type: 'string', default: '50000' },
    'sync-users': { type: 'string', default: '100' },
    'body-bytes': { type: 'string', default: '64' },
    'cpu-prof': { type: 'string' },
    perf: { type: 'string' },
    'perf-hz': { type: 'string' },
    'parley-node-args': { type: 'string' },
    'ref-im': { type: 'string', default: DEFAULT_REF_IM_DIR },
    json: { type: 'string' },
    capacity: { type: 'boolean', default: false },
    cluster: { type: 'boolean', default: false },
    'cluster-nodes': { type: 'string', default: '3' },
    help: { type: 'boolean', default: false },
  },
});

if (values.help) {
  console.log(HELP);
  process.exit(0);
}

const num = (name: string, v: string): number => {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number, got ${v}`);
  return n;
};
const wholeOrZero = (name: string, v: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a whole number (0 or more), got ${v}`);
  return n;
};
/** `--perf-hz`: a whole number of samples a second from 1 to 10,000, and only with `--perf`. */
function perfHzOf(v: string): number {
  if (!values.perf) throw new Error('--perf-hz needs --perf DIR (it sets the sampling rate of that recording)');
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 10_000) throw new Error(`--perf-hz must be a whole number from 1 to 10000, got ${v}`);
  return n;
}
const log = (line: string): void => void process.stderr.write(`${line}\n`);
const targets = values.targets.split(',') as TargetName[];
for (const t of targets) if (!ALL_TARGETS.includes(t)) throw new Error(`unknown target ${t}`);
const scenarios = values.scenarios.split(',');
for (const s of scenarios) if (!SCENARIOS[s]) throw new Error(`unknown scenario ${s}`);

const options: BenchOptions = {
  scenarios,
  targets,
  log,
  phaseSeconds: num('seconds', values.seconds),
  warmupSeconds: num('warmup', values.warmup),
  bodyBytes: num('body-bytes', values['body-bytes']),
  stormCount: num('storm', values.storm),
  stormConcurrency: num('storm-concurrency', values['storm-concurrency']),
  stormRate: num('storm-rate', values['storm-rate']),
  stormWarmup: wholeOrZero('storm-warmup', values['storm-warmup']),
  pairs: num('pairs', values.pairs),
  rates: values.rates.split(',').map((r) => num('rates', r)),
  groups: num('groups', values.groups),
  members: num('members', values.members),
  groupRate: num('group-rate', values['group-rate']),
  syncMessages: num('sync-messages', values['sync-messages']),
  syncUsers: num('sync-users', values['sync-users']),
  parleyNodeArgs: [
    ...(values['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${values['cpu-prof']}`] : []),
    ...(values.perf ? ['--perf-prof'] : []),
    ...(values['parley-node-args']?.split(' ').filter(Boolean) ?? []),
  ],
  // Read by Parley's launcher (bin/parley-node), passed on by the driver; recorded with the figures.
  parleyGcThreads: process.env.PARLEY_GC_THREADS ?? 'auto',
  refImDir: values['ref-im'],
  perfDir: values.perf,
  ...(values['perf-hz'] === undefined ? {} : { perfHz: perfHzOf(values['perf-hz']) }),
};
if (values.perf) mkdirSync(values.perf, { recursive: true });

installCleanup();
if (pinningPlan().warning) log(`warning: ${pinningPlan().warning}`);
pinSelf(1);

if (values.cluster) {
  const doc = await runClusterBench({ ...options, clusterNodes: num('cluster-nodes', values['cluster-nodes']) });
  console.log(
    `cluster: ${doc.nodes} nodes, lifecycle ${doc.lifecycleSendsPerSec} sends/s at sendack p99 ≤ ${CLUSTER_P99_MS} ms (achieved ${Number(doc.achievedAtThatStep).toFixed(0)}/s)`,
  );
  console.log(`  ${doc.tag} (sentinel ${JSON.stringify(doc.sentinel)}; load average ${JSON.stringify(doc.loadAverage)})`);
  type Step = { scenario: string; valid: boolean; sendackP50Ms: number | null; sendackP99Ms: number | null; failedGates: string[] };
  for (const s of doc.steps as Array<Step & { cpuMsPer1kMsgs?: Record<string, number> }>)
    console.log(
      `  ${s.scenario.padEnd(10)} p50 ${s.sendackP50Ms?.toFixed(1)} ms, p99 ${s.sendackP99Ms?.toFixed(1)} ms, CPU per 1k msgs ${JSON.stringify(s.cpuMsPer1kMsgs)}  ${s.valid ? 'valid' : `invalid: ${s.failedGates.join('; ')}`}`,
    );
  console.log(JSON.stringify(doc));
  if (values.json) writeFileSync(values.json, JSON.stringify(doc, null, 2));
} else if (values.capacity) {
  const doc = await runCapacity(options);
  const summary = doc.summary as Record<string, { oneToOne: number; groups: number }>;
  console.log(`capacity: highest step holding sendack p99 < ${doc.p99LimitMs} ms twice in a row`);
  for (const [t, s] of Object.entries(summary))
    console.log(`  ${t.padEnd(16)} 1:1 ${String(s.oneToOne).padStart(6)} msg/s   groups ${String(s.groups).padStart(4)} msg/s`);
  console.log(JSON.stringify(doc));
  if (values.json) writeFileSync(values.json, JSON.stringify(doc, null, 2));
} else {
  const outcome = await runBench(options);
  const reports = buildReports(outcome.results);
  const tag = outcome.sentinel.noisy ? 'noisy' : 'quiet';
  console.log(
    `parley-bench ${outcome.git ?? ''} — ${tag} (sentinel ${outcome.sentinel.beforeMs.toFixed(0)} → ${outcome.sentinel.afterMs.toFixed(0)} ms, ${(outcome.sentinel.difference * 100).toFixed(0)}%), ${outcome.durationS.toFixed(0)} s`,
  );
  console.log(`durability: mosquitto ${outcome.durability.mosquitto}; parley ${outcome.durability.parley}`);
  if (outcome.pinning.warning) console.log(`warning: ${outcome.pinning.warning}`);
  if (outcome.durationS > TIME_BOUND_S) {
    const setup = outcome.results.reduce((t, r) => t + (r.counts.setupStartS ?? 0) + (r.counts.setupUsersS ?? 0), 0);
    console.log(
      `note: the run took ${outcome.durationS.toFixed(0)} s, over the ${TIME_BOUND_S} s bound, with the issue's default sizes (not shrunk); ` +
        `${setup.toFixed(0)} s of it was server start-up and user provisioning (one fsynced POST /user/token per Parley user)`,
    );
  }
  console.log(renderTable(reports, targets));
  for (const p of renderProblems(reports)) console.log(`! ${p}`);
  const doc = { tool: 'parley-bench', tag, ...outcome, options: { ...options, log: undefined }, reports };
  console.log(JSON.stringify(doc));
  if (values.json) writeFileSync(values.json, JSON.stringify(doc, null, 2));
}
process.exit(0);
