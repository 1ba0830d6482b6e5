/**
 * Child processes of the run (servers, the sentinel): every one is killed when
 * the bench exits, including on Ctrl-C or a crash, so nothing outlives it.
 */
import process from 'node:process';
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';

const live = new Set<ChildProcess>();

/** Children started as the leaders of process groups of their own: signalled group and all. */
const groups = new WeakSet<ChildProcess>();

/**
 * Spawns a tracked child; it is killed with SIGKILL if still alive when the bench exits. With
 * `options.detached` it leads a process group of its own, and every signal the bench sends it goes
 * to the whole group: a tool the server runs under (`strace -f`, say) may leave its child running
 * when it is stopped itself, and that child would go on taking the server's core.
 */
export function spawnTracked(cmd: string, args: readonly string[], options: SpawnOptions): ChildProcess {
  const child = spawn(cmd, args, options);
  live.add(child);
  if (options.detached) groups.add(child);
  // A group stays tracked after its leader exits: the rest of it may still run.
  child.on('exit', () => groups.has(child) || live.delete(child));
  return child;
}

/** Sends `signal` to the child, or to its whole process group when it leads one (`spawnTracked`). */
export function signalChild(child: ChildProcess, signal: NodeJS.Signals): void {
  if (groups.has(child) && child.pid !== undefined) {
    try {
      process.kill(-child.pid, signal);
    } catch {
      // The group is gone already.
    }
  } else child.kill(signal);
}

/**
 * Sends `signal` (SIGTERM), then SIGKILL after `graceMs`; resolves once the child has exited (and,
 * for a group, once the whole group has, at most `graceMs` more after the SIGKILL).
 */
export function stopChild(child: ChildProcess, graceMs = 3000, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  const settled = child.exitCode !== null || child.signalCode !== null;
  if (settled && !groups.has(child)) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => signalChild(child, 'SIGKILL'), graceMs);
    const done = () => {
      clearTimeout(timer);
      if (groups.has(child))
        void groupGone(child.pid!, graceMs * 2).then(() => {
          live.delete(child);
          resolve();
        });
      else resolve();
    };
    if (settled) done();
    else child.once('exit', done);
    signalChild(child, signal);
  });
}

/** Resolves once no process of group `pgid` is left, SIGKILLing what is left after `graceMs`. */
async function groupGone(pgid: number, graceMs: number): Promise<void> {
  const alive = () => {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const giveUp = Date.now() + graceMs;
  while (alive() && Date.now() < giveUp) await new Promise((r) => setTimeout(r, 50));
  if (alive()) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
}

function killAll(): void {
  for (const child of live) signalChild(child, 'SIGKILL');
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
