/**
 * Full-scan benchmark: opens every shard of the largest v2 fixture (or the
 * directories given as arguments), streams the live key/value set and prints
 * throughput in MB/s of sstable bytes (MB = 10^6 bytes) and keys/s.
 * Usage: npm run bench -w packages/pebble [-- <pebble dir>...]
 */
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpus } from 'node:os';
import { openPebble } from '../src/index.ts';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), '../../../../shared/fixtures/v2');
const defaultRoot = join(fixtures, 'holdout-closed/datadir/db/wukongimdb');

function dirs(): string[] {
  const args = process.argv.slice(2);
  if (args.length > 0) return args;
  if (!existsSync(defaultRoot)) {
    console.error(`fixture ${defaultRoot} is absent; pass pebble directories as arguments`);
    process.exit(2);
  }
  return readdirSync(defaultRoot).sort().map((s) => join(defaultRoot, s));
}

interface Pass {
  ms: number;
  openMs: number;
  keys: number;
  keyValueBytes: number;
}

function scanOnce(paths: string[]): Pass {
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
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, openMs, keys, keyValueBytes };
}

const paths = dirs();
let tableBytes = 0;
let walBytes = 0;
let tables = 0;
for (const p of paths) {
  const s = openPebble(p).stats();
  tableBytes += s.tableBytes;
  tables += s.levels.reduce((n, l) => n + l.files.length, 0);
  walBytes += s.wals.reduce((n, w) => n + w.size, 0);
}

const warmup = scanOnce(paths);
const passes: Pass[] = [];
const deadline = Date.now() + 5000;
while (passes.length < 5 || (Date.now() < deadline && passes.length < 50)) passes.push(scanOnce(paths));
const best = passes.reduce((a, b) => (b.ms < a.ms ? b : a));
const median = [...passes].sort((a, b) => a.ms - b.ms)[Math.floor(passes.length / 2)]!;

const mb = (n: number): string => (n / 1e6).toFixed(2);
const rate = (n: number, ms: number): string => ((n / ms) * 1000).toFixed(0);
console.log(`pebble full scan: ${paths.length} DB(s), ${tables} sstables, ${mb(tableBytes)} MB table data, ${mb(walBytes)} MB WAL, ${warmup.keys} live keys, ${mb(warmup.keyValueBytes)} MB live key+value bytes`);
console.log(`machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}; ${passes.length} timed passes after one warm-up, open + WAL replay + scan each`);
console.log(`median: ${median.ms.toFixed(1)} ms = ${mb((tableBytes / median.ms) * 1000)} MB/s of table data, ${rate(median.keys, median.ms)} keys/s, ${mb((median.keyValueBytes / median.ms) * 1000)} MB/s of live key+value bytes`);
console.log(`best:   ${best.ms.toFixed(1)} ms = ${mb((tableBytes / best.ms) * 1000)} MB/s of table data, ${rate(best.keys, best.ms)} keys/s`);
const scanMs = median.ms - median.openMs;
console.log(
  `median split: open (MANIFEST + WAL replay into the memtable) ${median.openMs.toFixed(1)} ms, ` +
    `merged scan ${scanMs.toFixed(1)} ms = ${mb((tableBytes / scanMs) * 1000)} MB/s of table data, ${rate(median.keys, scanMs)} keys/s`,
);
