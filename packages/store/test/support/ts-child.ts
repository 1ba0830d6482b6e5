import { spawn } from 'node:child_process';

/** A child process running a TypeScript script under tsx, its output collected as it comes. */
export interface TsChild {
  /** Its standard output so far. */
  out(): string;
  /** Its standard error so far. */
  err(): string;
  /** Settles with the signal that ended it (null when it exited by itself). */
  exited: Promise<NodeJS.Signals | null>;
  /** Ends it as a crash would: SIGKILL. */
  kill(): void;
}

/** Starts `node --import tsx script ...args` (the kill -9 tests' children). */
export function spawnTsChild(script: string, args: readonly string[]): TsChild {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
  return { out: () => out, err: () => err, exited, kill: () => child.kill('SIGKILL') };
}
