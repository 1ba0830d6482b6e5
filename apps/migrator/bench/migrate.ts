import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { newReport } from '../src/run-stage.ts';
import { runExport, type ExportReport } from '../src/stages/export-stage.ts';
import { runPrepare, type PrepareReport } from '../src/stages/prepare-stage.ts';
import { scanWorkersReady, startScanWorkers } from '../src/v2/scan-pool.ts';

/**
 * prepare + export throughput on the largest v2 fixture (holdout-closed, or
 * the data dir given as the first argument), in process: one warm-up, then
 * timed passes for 5 s (at least 3). Prints messages/s of prepare+export.
 * Two measurements in one run: the main thread alone (what a one-off run does
 * on a source below SCAN_WORKERS_MIN_BYTES), then steady state with the scan
 * workers started and loaded, as in a long migration. Process start-up is not
 * timed.
 */
const here = dirname(fileURLToPath(import.meta.url));
const source = resolve(process.argv[2] ?? join(here, '../../../../shared/fixtures/v2/holdout-closed/datadir'));
process.stderr.write = (() => true) as typeof process.stderr.write;

async function pass(): Promise<{ prepareMs: number; exportMs: number; messages: number }> {
  const root = mkdtempSync(join(tmpdir(), 'parleyctl-bench-'));
  try {
    const plan = join(root, 'plan.json');
    writeFileSync(plan, JSON.stringify({
      version: 1,
      sources: [{ node_id: 1, data_dir: source, shard_count: 8 }],
      target: { cluster_id: 'bench', created_at: '2026-05-01T00:00:00Z', slot_count: 12, hash_slot_count: 256, replicas: 1, channel_replicas: 1, nodes: [{ node_id: 1, addr: '127.0.0.1:11110', data_dir: join(root, 'target') }] },
    }));
    const t0 = performance.now();
    const prep = newReport<PrepareReport>('prepare', { blockers: [], warnings: [] });
    await runPrepare(plan, join(root, 'ws'), prep, { ownsWorkspace: false });
    const t1 = performance.now();
    const exp = newReport<ExportReport>('export', {});
    await runExport(plan, join(root, 'ws'), join(root, 'archive'), exp);
    const t2 = performance.now();
    if (prep.status !== 'prepared' || exp.status !== 'exported') throw new Error(`bench run failed: ${prep.errors.join('; ')} ${exp.errors.join('; ')}`);
    return { prepareMs: t1 - t0, exportMs: t2 - t1, messages: prep.retained_messages ?? 0 };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

type Run = Awaited<ReturnType<typeof pass>>;

/** One warm-up, then passes for 5 s (at least 3); medians and best. */
async function measure(): Promise<Record<string, number>> {
  await pass();
  const runs: Run[] = [];
  const start = performance.now();
  while (runs.length < 3 || performance.now() - start < 5000) runs.push(await pass());
  const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const total = runs.map((r) => r.prepareMs + r.exportMs);
  const messages = runs[0]!.messages;
  return {
    messages,
    passes: runs.length,
    prepare_ms_median: Math.round(med(runs.map((r) => r.prepareMs))),
    export_ms_median: Math.round(med(runs.map((r) => r.exportMs))),
    total_ms_median: Math.round(med(total)),
    total_ms_best: Math.round(Math.min(...total)),
    messages_per_s_median: Math.round((messages * 1000) / med(total)),
    messages_per_s_best: Math.round((messages * 1000) / Math.min(...total)),
  };
}

// First the main thread alone (what a one-off run does on a source this small), then with the scan workers.
const mainThread = await measure();
const t0 = performance.now();
startScanWorkers();
const workers = await scanWorkersReady();
const startMs = Math.round(performance.now() - t0);
const withWorkers = await measure();
process.stdout.write(`${JSON.stringify({
  source,
  main_thread_only: mainThread,
  with_scan_workers: { scan_workers: workers, scan_workers_start_ms: startMs, ...withWorkers },
  ratio_median: Number((withWorkers.messages_per_s_median! / mainThread.messages_per_s_median!).toFixed(2)),
}, null, 2)}\n`);
