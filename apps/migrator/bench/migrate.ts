import process from 'node:process';
import { performance } from 'node:perf_hooks';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { newReport } from '../src/run-stage.ts';
import { runExport, type ExportReport } from '../src/stages/export-stage.ts';
import { runImport, type ImportReport } from '../src/stages/import-stage.ts';
import { runPrepare, type PrepareReport } from '../src/stages/prepare-stage.ts';
import { runVerify, type VerifyReport } from '../src/stages/verify-stage.ts';
import { scanWorkersReady, startScanWorkers } from '../src/v2/scan-pool.ts';

/**
 * Throughput of every stage on the largest v2 fixture (holdout-closed, or
 * the data dir given as the first argument). In process: one warm-up, then
 * timed passes of prepare, export, import and verify for 5 s (at least 3),
 * first with the main thread alone (what a one-off run does on a source below
 * SCAN_WORKERS_MIN_BYTES), then with the scan workers started and loaded (as
 * in a long migration); messages/s per stage. Then the four `parleyctl`
 * commands as separate processes, as an operator runs them: wall time per
 * command and in total (process start-up included), three runs, running
 * the compiled bins (`npm run build` first). CPU time (user + system, every
 * thread) is given beside wall time: on a shared host it moves much less.
 */
const here = dirname(fileURLToPath(import.meta.url));
const source = resolve(process.argv[2] ?? join(here, '../../../../shared/fixtures/v2/holdout-closed/datadir'));
const PARLEYCTL = join(here, '..', 'bin', 'parleyctl.js');
const quiet = process.stderr.write.bind(process.stderr);
process.stderr.write = (() => true) as typeof process.stderr.write;

function planIn(root: string): string {
  const plan = join(root, 'plan.json');
  writeFileSync(
    plan,
    JSON.stringify({
      version: 1,
      sources: [{ node_id: 1, data_dir: source, shard_count: 8 }],
      target: {
        cluster_id: 'bench',
        created_at: '2026-05-01T00:00:00Z',
        slot_count: 12,
        hash_slot_count: 256,
        replicas: 1,
        channel_replicas: 1,
        nodes: [{ node_id: 1, addr: '127.0.0.1:11110', data_dir: join(root, 'target') }],
      },
    }),
  );
  return plan;
}

const STAGES = ['prepare', 'export', 'import', 'verify'] as const;
type Pass = Record<(typeof STAGES)[number], number> & { messages: number; cpu: Record<(typeof STAGES)[number], number> };

async function pass(): Promise<Pass> {
  const root = mkdtempSync(join(tmpdir(), 'parleyctl-bench-'));
  try {
    const plan = planIn(root);
    const ctx = () => ({ ownsWorkspace: false });
    // CPU of the whole process (every thread), ms
    const cpu = () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    };
    const c0 = cpu();
    const t0 = performance.now();
    const prep = newReport<PrepareReport>('prepare', { blockers: [], warnings: [] });
    await runPrepare(plan, join(root, 'ws'), prep, ctx());
    const t1 = performance.now();
    const c1 = cpu();
    const exp = newReport<ExportReport>('export', {});
    await runExport(plan, join(root, 'ws'), join(root, 'archive'), exp);
    const t2 = performance.now();
    const c2 = cpu();
    const imp = newReport<ImportReport>('import', { targets: [] });
    await runImport(plan, join(root, 'ws-import'), join(root, 'archive'), imp, ctx());
    const t3 = performance.now();
    const c3 = cpu();
    const ver = newReport<VerifyReport>('verify', { targets: [], mismatches: [] });
    await runVerify(plan, join(root, 'ws-verify'), join(root, 'archive'), ver, ctx());
    const t4 = performance.now();
    const c4 = cpu();
    const failed = [prep, exp, imp, ver].filter((r, i) => r.status !== ['prepared', 'exported', 'imported', 'offline_verified'][i]);
    if (failed.length > 0) throw new Error(`bench run failed: ${failed.map((r) => `${r.stage}: ${r.errors.join('; ')}`).join(' | ')}`);
    return {
      prepare: t1 - t0,
      export: t2 - t1,
      import: t3 - t2,
      verify: t4 - t3,
      messages: prep.retained_messages ?? 0,
      cpu: { prepare: c1 - c0, export: c2 - c1, import: c3 - c2, verify: c4 - c3 },
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** One warm-up, then passes for 5 s (at least 3): per stage the median ms and messages/s. */
async function measure(): Promise<Record<string, unknown>> {
  await pass();
  const runs: Pass[] = [];
  const start = performance.now();
  while (runs.length < 3 || performance.now() - start < 5000) runs.push(await pass());
  const messages = runs[0]!.messages;
  const out: Record<string, unknown> = { messages, passes: runs.length };
  for (const s of STAGES) {
    const ms = med(runs.map((r) => r[s]));
    out[s] = {
      ms_median: Math.round(ms),
      messages_per_s: Math.round((messages * 1000) / ms),
      cpu_ms_median: Math.round(med(runs.map((r) => r.cpu[s]))),
    };
  }
  const total = med(runs.map((r) => STAGES.reduce((n, s) => n + r[s], 0)));
  out.all_four_ms_median = Math.round(total);
  return out;
}

/** The four commands as separate processes, wall time each (start-up included). */
function cli(): Record<string, number> {
  const root = mkdtempSync(join(tmpdir(), 'parleyctl-bench-cli-'));
  try {
    const plan = planIn(root);
    const args: Record<string, string[]> = {
      prepare: ['--workspace', join(root, 'ws')],
      export: ['--workspace', join(root, 'ws'), '--archive', join(root, 'archive')],
      import: ['--workspace', join(root, 'ws-import'), '--archive', join(root, 'archive')],
      verify: ['--workspace', join(root, 'ws-verify'), '--archive', join(root, 'archive')],
    };
    const out: Record<string, number> = {};
    let total = 0;
    let cpuTotal = 0;
    for (const s of STAGES) {
      const t0 = performance.now();
      // GNU time reports the child's user and system CPU seconds on its last stderr line
      const r = spawnSync('/usr/bin/time', ['-f', '%U %S', process.execPath, PARLEYCTL, 'migrate', s, '--plan', plan, ...args[s]!], {
        encoding: 'utf8',
      });
      const ms = performance.now() - t0;
      if (r.status !== 0) throw new Error(`parleyctl migrate ${s} failed: ${r.stdout.slice(0, 500)}`);
      const [user, sys] = r.stderr.trim().split('\n').at(-1)!.split(' ').map(Number);
      out[`${s}_ms`] = Math.round(ms);
      out[`${s}_cpu_ms`] = Math.round(((user ?? 0) + (sys ?? 0)) * 1000);
      total += ms;
      cpuTotal += ((user ?? 0) + (sys ?? 0)) * 1000;
    }
    out.total_ms = Math.round(total);
    out.total_cpu_ms = Math.round(cpuTotal);
    return out;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const mainThread = await measure();
const t0 = performance.now();
startScanWorkers();
const workers = await scanWorkersReady();
const startMs = Math.round(performance.now() - t0);
const withWorkers = await measure();
const cliRuns = [cli(), cli(), cli()];
process.stderr.write = quiet;
process.stdout.write(
  `${JSON.stringify(
    {
      source,
      main_thread_only: mainThread,
      with_scan_workers: { scan_workers: workers, scan_workers_start_ms: startMs, ...withWorkers },
      cli_wall: {
        runs: cliRuns,
        total_ms_median: med(cliRuns.map((r) => r.total_ms!)),
        total_cpu_ms_median: med(cliRuns.map((r) => r.total_cpu_ms!)),
      },
    },
    null,
    2,
  )}\n`,
);
