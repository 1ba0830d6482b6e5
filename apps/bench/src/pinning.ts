/**
 * CPU pinning: servers on core 0, the load generator on core 1, so the servers
 * never compete with the generator. Degrades (with a warning) without taskset
 * or with a single core.
 */
import process from 'node:process';
import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

/** Whether pinning is possible here, and why not when it is not. */
export interface PinningPlan {
  enabled: boolean;
  warning?: string;
}

let plan: PinningPlan | undefined;

/** Checks for `taskset` and at least 2 cores (cached). */
export function pinningPlan(): PinningPlan {
  if (plan) return plan;
  try {
    execFileSync('taskset', ['-V'], { stdio: 'ignore' });
  } catch {
    return (plan = { enabled: false, warning: 'taskset not found: servers and generator are not pinned' });
  }
  if (availableParallelism() < 2) return (plan = { enabled: false, warning: 'only 1 core: servers and generator share it' });
  return (plan = { enabled: true });
}

/** The command line that runs `cmd args` on `core` (unchanged when pinning is off). */
export function pinned(core: number, cmd: string, args: readonly string[]): [string, string[]] {
  return pinningPlan().enabled ? ['taskset', ['-c', String(core), cmd, ...args]] : [cmd, [...args]];
}

/** Pins every thread of this process (the generator) to `core`; returns false when pinning is off. */
export function pinSelf(core: number): boolean {
  if (!pinningPlan().enabled) return false;
  execFileSync('taskset', ['-a', '-cp', String(core), String(process.pid)], { stdio: 'ignore' });
  return true;
}
