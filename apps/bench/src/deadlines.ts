/**
 * Time limits of the generator's per-connection waits (a CONNACK, a
 * catch-up), checked by one shared interval instead of a timer each. A
 * catch-up round opens a connection every few hundred microseconds; with a
 * `setTimeout` per wait, V8 happened to optimise Node's timer code on the
 * generator's core in the middle of S3's measured catch-up (17 ms of
 * compilation in a 45 ms phase). A limit fires up to {@link SWEEP_MS} late,
 * which is nothing against limits of seconds.
 */
import { performance } from 'node:perf_hooks';

/** How often pending limits are checked, ms. */
export const SWEEP_MS = 100;

interface Pending {
  at: number;
  expire: () => void;
}

const pending = new Set<Pending>();
let sweeper: NodeJS.Timeout | undefined;

function sweep(): void {
  const now = performance.now();
  for (const p of pending) {
    if (p.at > now) continue;
    pending.delete(p);
    p.expire();
  }
  if (pending.size === 0 && sweeper) {
    clearInterval(sweeper);
    sweeper = undefined;
  }
}

/**
 * Calls `expire` once, when `ms` have passed (within {@link SWEEP_MS}),
 * unless the returned function is called first. Like a timer, a pending
 * limit keeps the process alive.
 */
export function deadline(ms: number, expire: () => void): () => void {
  const p: Pending = { at: performance.now() + ms, expire };
  pending.add(p);
  sweeper ??= setInterval(sweep, SWEEP_MS);
  return () => void pending.delete(p);
}

/** Limits not yet expired nor cancelled (for tests). */
export function pendingDeadlines(): number {
  return pending.size;
}
