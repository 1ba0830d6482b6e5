/**
 * Full-scan benchmark: opens every shard of the largest v2 fixture (or the
 * directories given as arguments), streams the live key/value set and prints
 * throughput in MB/s of sstable bytes (MB = 10^6 bytes) and keys/s.
 *
 * Two modes, measured in the same run: one thread opening and scanning the
 * shards one after another, and one worker thread per core, each opening and
 * scanning a share of the shards (shards are independent Pebble databases, so a
 * consumer such as the migrator can read them in parallel).
 *
 * Usage: npm run bench -w packages/pebble [-- <pebble dir>...]
 */
import { existsSync, readdirSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMainThread, parentPort, Worker } from 'node:worker_threads';
import { openPebble } from '../src/index.ts';

interface Pass {
  ms: number;
  cpuMs: number;
  openMs: number;
  keys: number;
  keyValueBytes: number;
}

/** Opens and scans `paths` one after another, reading every key and value. */
function scanOnce(paths: readonly string[]): Pass {
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  let keys = 0;
  let keyValueBytes = 0;
  let openMs = 0;
  for (const p of paths) {
    const o = process.hrtime.bigint();
    const db = openPebble(p);
    openMs += Number(process.hrtime.bigint() - o) / 1e6;
    for (const e of db.iterate()) {
      keys++;
      keyValueBytes += e.key.length + e.value.length;
    }
  }
  const cpu = process.cpuUsage(cpu0);
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, cpuMs: (cpu.user + cpu.system) / 1000, openMs, keys, keyValueBytes };
}

if (!isMainThread) {
  // Worker: scan the shards it is sent, answer with the pass figures.
  parentPort!.on('message', (paths: string[]) => parentPort!.postMessage(scanOnce(paths)));
} else {
  await main();
}

async function main(): Promise<void> {
  const fixtures = join(dirname(fileURLToPath(import.meta.url)), '../../../../shared/fixtures/v2');
  const defaultRoot = join(fixtures, 'holdout-closed/datadir/db/wukongimdb');
  const args = process.argv.slice(2);
  if (args.length === 0 && !existsSync(defaultRoot)) {
    console.error(`fixture ${defaultRoot} is absent; pass pebble directories as arguments`);
    process.exit(2);
  }
  const paths =
    args.length > 0
      ? args
      : readdirSync(defaultRoot)
          .sort()
          .map((s) => join(defaultRoot, s));

  let tableBytes = 0;
  let walBytes = 0;
  let tables = 0;
  const sizes = new Map<string, number>();
  for (const p of paths) {
    const s = openPebble(p).stats();
    sizes.set(p, s.tableBytes + s.wals.reduce((n, w) => n + w.size, 0));
    tableBytes += s.tableBytes;
    tables += s.levels.reduce((n, l) => n + l.files.length, 0);
    walBytes += s.wals.reduce((n, w) => n + w.size, 0);
  }
  const mb = (n: number): string => (n / 1e6).toFixed(2);
  const rate = (n: number, ms: number): string => ((n / ms) * 1000).toFixed(0);
  const median = <T>(xs: T[], by: (x: T) => number): T => [...xs].sort((a, b) => by(a) - by(b))[Math.floor(xs.length / 2)]!;
  /** One warm-up, then passes for 5 s (at least 5, at most 50). */
  const timed = async (pass: () => Promise<Pass> | Pass): Promise<Pass[]> => {
    await pass();
    const out: Pass[] = [];
    const deadline = Date.now() + 5000;
    while (out.length < 5 || (Date.now() < deadline && out.length < 50)) out.push(await pass());
    return out;
  };

  const single = await timed(() => scanOnce(paths));
  const m = median(single, (p) => p.ms);
  const best = single.reduce((a, b) => (b.ms < a.ms ? b : a));
  const cpu = median(single, (p) => p.cpuMs);
  console.log(
    `pebble full scan: ${paths.length} DB(s), ${tables} sstables, ${mb(tableBytes)} MB table data, ${mb(walBytes)} MB WAL, ${m.keys} live keys, ${mb(m.keyValueBytes)} MB live key+value bytes`,
  );
  console.log(
    `machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}; each pass = open (MANIFEST, WAL replay) + full scan of every DB; one warm-up, then ${single.length} passes`,
  );
  console.log(
    `one thread, open + full scan, median: ${m.ms.toFixed(1)} ms = ${mb((tableBytes / m.ms) * 1000)} MB/s of table data, ${rate(m.keys, m.ms)} keys/s, ${mb((m.keyValueBytes / m.ms) * 1000)} MB/s of live key+value bytes`,
  );
  console.log(
    `one thread, open + full scan, best:   ${best.ms.toFixed(1)} ms = ${mb((tableBytes / best.ms) * 1000)} MB/s of table data, ${rate(best.keys, best.ms)} keys/s`,
  );
  console.log(
    `one thread, CPU time per pass (median): ${cpu.cpuMs.toFixed(1)} ms = ${mb((tableBytes / cpu.cpuMs) * 1000)} MB/s of table data per busy core`,
  );
  const scanMs = m.ms - m.openMs;
  console.log(
    `one thread, full scan alone (iterate() over every DB, after open), median: ${scanMs.toFixed(1)} ms = ${mb((tableBytes / scanMs) * 1000)} MB/s of table data, ${rate(m.keys, scanMs)} keys/s; open (MANIFEST + WAL replay) ${m.openMs.toFixed(1)} ms`,
  );

  const threads = Math.min(cpus().length, paths.length);
  if (threads < 2) return;
  // Largest first onto the least-loaded worker.
  const shares: string[][] = Array.from({ length: threads }, () => []);
  const load = new Array<number>(threads).fill(0);
  for (const p of [...paths].sort((a, b) => sizes.get(b)! - sizes.get(a)!)) {
    const w = load.indexOf(Math.min(...load));
    shares[w]!.push(p);
    load[w]! += sizes.get(p)!;
  }
  // Workers do not inherit the tsx loader: each registers it, then loads this file.
  const boot = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((m) => { m.register(); return import(${JSON.stringify(import.meta.url)}); })`;
  const workers = shares.map(() => new Worker(boot, { eval: true }));
  let failed: Error | undefined;
  for (const w of workers) w.on('error', (err) => (failed = err));
  const ask = (w: Worker, share: string[]): Promise<Pass> =>
    new Promise((resolve, reject) => {
      if (failed) reject(failed);
      w.once('message', resolve);
      w.postMessage(share);
    });
  const parallel = await timed(async () => {
    const t0 = process.hrtime.bigint();
    const parts = await Promise.all(workers.map((w, i) => ask(w, shares[i]!)));
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    return {
      ms,
      cpuMs: parts.reduce((n, p) => n + p.cpuMs, 0),
      openMs: 0,
      keys: parts.reduce((n, p) => n + p.keys, 0),
      keyValueBytes: parts.reduce((n, p) => n + p.keyValueBytes, 0),
    };
  });
  await Promise.all(workers.map((w) => w.terminate()));
  const pm = median(parallel, (p) => p.ms);
  const pb = parallel.reduce((a, b) => (b.ms < a.ms ? b : a));
  if (pm.keys !== m.keys) throw new Error(`workers read ${pm.keys} keys, one thread ${m.keys}`);
  console.log(
    `${threads} worker threads, open + full scan, median: ${pm.ms.toFixed(1)} ms = ${mb((tableBytes / pm.ms) * 1000)} MB/s of table data, ${rate(pm.keys, pm.ms)} keys/s (${parallel.length} passes; ratio to one thread ${(m.ms / pm.ms).toFixed(2)}x)`,
  );
  console.log(
    `${threads} worker threads, open + full scan, best:   ${pb.ms.toFixed(1)} ms = ${mb((tableBytes / pb.ms) * 1000)} MB/s of table data, ${rate(pb.keys, pb.ms)} keys/s`,
  );
}
