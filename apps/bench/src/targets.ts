/** Starting a fresh target by name, and the alternating order of targets per scenario. */
import { join } from 'node:path';
import { startMosquittoDriver } from './drivers/mosquitto.ts';
import { startParleyDriver } from './drivers/parley.ts';
import { startRefImDriver } from './drivers/ref-im.ts';
import type { Driver, TargetName } from './drivers/types.ts';

/** Every target, the peer first. */
export const ALL_TARGETS: readonly TargetName[] = ['mosquitto', 'parley-jsonrpc', 'parley-wkproto', 'ref-im'];

/** Whether `target` runs scenario `name`: the calibration loop knows only 1:1 messages (S1). */
export function runsScenario(target: TargetName, name: string): boolean {
  return target !== 'ref-im' || name === 'S1';
}

/** Extra node flags for Parley (e.g. `--cpu-prof`), set once by the CLI. */
export interface TargetOptions {
  parleyNodeArgs: readonly string[];
  /** The calibration loop's folder (holding `ref-im-server.mjs`). */
  refImDir: string;
  /** `--perf DIR`: each Parley server is sampled by `perf record` into DIR. */
  perfDir?: string;
  /** `--perf-hz`: perf's sampling rate (default `PERF_HZ`). */
  perfHz?: number;
  /** Names the perf file of the next server (scenario). */
  perfTag?: string;
  log: (line: string) => void;
}

/** Starts a fresh server for `name` (a new process and empty state each time). */
export function startTarget(name: TargetName, o: TargetOptions): Promise<Driver> {
  if (name === 'mosquitto') return startMosquittoDriver(o.log);
  if (name === 'ref-im') return startRefImDriver(o.refImDir);
  const perfFile = o.perfDir ? join(o.perfDir, `${name}-${o.perfTag ?? 'run'}-${Date.now()}.perf.data`) : undefined;
  return startParleyDriver(name === 'parley-jsonrpc' ? 'jsonrpc' : 'wkproto', o.parleyNodeArgs, perfFile, {}, o.perfHz);
}

/** The targets in run order for the `index`-th scenario: as given for even, reversed for odd (order alternates). */
export function orderFor(index: number, targets: readonly TargetName[]): TargetName[] {
  return index % 2 === 0 ? [...targets] : [...targets].reverse();
}
