import process from 'node:process';
import { randomUUID } from 'node:crypto';
import { Session } from 'node:inspector/promises';
import type { Readable } from 'node:stream';
import { getHeapSnapshot } from 'node:v8';
import type { GoroutineSummary } from '@parley/shared';
import { DomainError } from '../errors.ts';

/** Longest CPU profile one request may ask for, seconds (Go's default is 30). */
export const MAX_PROFILE_SECONDS = 60;
export const DEFAULT_PROFILE_SECONDS = 30;

/** Profiles `/debug/pprof/*name` serves, and what each maps to on Node.js. */
export const PPROF_PROFILES: Record<string, string> = {
  profile: 'V8 CPU profile (.cpuprofile JSON) over ?seconds=N (default 30, max 60)',
  heap: 'V8 heap snapshot (.heapsnapshot JSON)',
  allocs: 'same as heap',
  goroutine: 'active libuv handles and requests, by type (text)',
  cmdline: 'process argv, NUL-separated',
  symbol: 'symbol count (always 0: V8 symbolises in the profiles themselves)',
};
/** Go profiles with no Node.js equivalent: answered 404. */
export const PPROF_UNSUPPORTED = ['block', 'mutex', 'threadcreate', 'trace'];

const bootId = randomUUID();
const peaks = new Map<string, number>();
let profiling = false;

/** Records a V8 CPU profile for `seconds` and returns it as `.cpuprofile` JSON text. */
export async function cpuProfile(seconds: number): Promise<string> {
  // The inspector profiler is process-wide: one profile at a time.
  if (profiling) throw new DomainError('profiler_busy', 409, 'a CPU profile is already running');
  profiling = true;
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const { profile } = await session.post('Profiler.stop');
    return JSON.stringify(profile);
  } finally {
    session.disconnect();
    profiling = false;
  }
}

/** A V8 heap snapshot as a stream of `.heapsnapshot` JSON. */
export function heapSnapshot(): Readable {
  return getHeapSnapshot();
}

function resourceCounts(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const type of process.getActiveResourcesInfo()) counts.set(type, (counts.get(type) ?? 0) + 1);
  for (const [type, n] of counts) peaks.set(type, Math.max(peaks.get(type) ?? 0, n));
  return counts;
}

/** `/debug/goroutines`: Node's stand-in for a goroutine dump, in pprof debug=1 style. */
export function activeResourcesText(): string {
  const counts = resourceCounts();
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  const lines = [`goroutine profile: total ${total}`, '# Node.js: active libuv handles and requests by type', ''];
  for (const [type, n] of [...counts].sort((a, b) => b[1] - a[1])) lines.push(`${n} @ ${type}`);
  return `${lines.join('\n')}\n`;
}

/** `/debug/goroutines/summary`: active resources grouped by type as modules. */
export function activeResourcesSummary(now = new Date()): GoroutineSummary {
  const counts = resourceCounts();
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  return {
    generated_at: now.toISOString(),
    process_started_at: new Date(now.getTime() - process.uptime() * 1000).toISOString(),
    boot_id: bootId,
    process_total: total,
    managed_total: 0,
    unmanaged_total: total,
    reconciled: true,
    total_active: total,
    total_started: 0,
    total_panics: 0,
    modules: [...counts].map(([module, active]) => ({
      module,
      active,
      process_peak: peaks.get(module) ?? active,
      total_started: 0,
      total_stopped: 0,
      panics: 0,
      tasks: [],
    })),
  };
}
