/**
 * The noise sentinel: a fixed CPU-bound job (SHA-256 over a small buffer, a
 * fixed number of times) run on the server core before and after the run. If
 * the two timings differ by more than 30%, something else was using the
 * machine and the run is tagged `noisy`.
 */
import process from 'node:process';
import { execFileSync } from 'node:child_process';
import { pinned } from './pinning.ts';

/** Largest before/after difference (relative to the faster one) of a quiet run. */
export const NOISE_THRESHOLD = 0.3;

const JOB = `const { createHash } = require('node:crypto');
const b = Buffer.alloc(256, 7);
const times = [];
for (let r = 0; r < 5; r++) {
  const t = process.hrtime.bigint();
  for (let i = 0; i < 40000; i++) createHash('sha256').update(b).digest();
  times.push(Number(process.hrtime.bigint() - t) / 1e6);
}
times.sort((a, b) => a - b);
console.log(times[2]);`;

/** Median ms of the sentinel job on core 0 (5 repetitions in a fresh node). */
export function sentinelMs(): number {
  const [cmd, args] = pinned(0, process.execPath, ['-e', JOB]);
  return Number(execFileSync(cmd, args, { encoding: 'utf8', timeout: 30_000 }).trim());
}

/** Before/after comparison: the relative difference and whether it exceeds the threshold. */
export function compareSentinel(beforeMs: number, afterMs: number): { difference: number; noisy: boolean } {
  const difference = Math.abs(afterMs - beforeMs) / Math.min(beforeMs, afterMs);
  return { difference, noisy: difference > NOISE_THRESHOLD };
}
