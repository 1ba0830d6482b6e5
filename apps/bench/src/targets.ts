/** Starting a fresh target by name, and the alternating order of targets per scenario. */
import { startMosquittoDriver } from './drivers/mosquitto.ts';
import { startParleyDriver } from './drivers/parley.ts';
import type { Driver, TargetName } from './drivers/types.ts';

/** Every target, the peer first. */
export const ALL_TARGETS: readonly TargetName[] = ['mosquitto', 'parley-jsonrpc', 'parley-wkproto'];

/** Extra node flags for Parley (e.g. `--cpu-prof`), set once by the CLI. */
export interface TargetOptions {
  parleyNodeArgs: readonly string[];
  log: (line: string) => void;
}

/** Starts a fresh server for `name` (a new process and empty state each time). */
export function startTarget(name: TargetName, o: TargetOptions): Promise<Driver> {
  if (name === 'mosquitto') return startMosquittoDriver(o.log);
  return startParleyDriver(name === 'parley-jsonrpc' ? 'jsonrpc' : 'wkproto', o.parleyNodeArgs);
}

/** The targets in run order for the `index`-th scenario: as given for even, reversed for odd (order alternates). */
export function orderFor(index: number, targets: readonly TargetName[]): TargetName[] {
  return index % 2 === 0 ? [...targets] : [...targets].reverse();
}
