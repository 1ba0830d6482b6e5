/**
 * Child processes of the run (servers, the sentinel): every one is killed when
 * the bench exits, including on Ctrl-C or a crash, so nothing outlives it.
 */
import process from 'node:process';
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';

const live = new Set<ChildProcess>();

/** Spawns a tracked child; it is killed with SIGKILL if still alive when the bench exits. */
export function spawnTracked(cmd: string, args: readonly string[], options: SpawnOptions): ChildProcess {
  const child = spawn(cmd, args, options);
  live.add(child);
  child.on('exit', () => live.delete(child));
  return child;
}

/** Sends `signal` (SIGTERM), then SIGKILL after `graceMs`; resolves once the child has exited. */
export function stopChild(child: ChildProcess, graceMs = 3000, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill(signal);
  });
}

function killAll(): void {
  for (const child of live) child.kill('SIGKILL');
}

let installed = false;

/** Installs exit and signal handlers that kill every tracked child (idempotent). */
export function installCleanup(): void {
  if (installed) return;
  installed = true;
  process.on('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      killAll();
      process.exit(130);
    });
  }
}
