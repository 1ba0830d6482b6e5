import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import process from 'node:process';
import { afterEach, describe, expect, it } from 'vitest';
import { listeningEventIn } from '@parley/shared';
import { SOURCE_NODE_ARGS } from '../../../test-support/source-node.ts';
import { PARLEY_BIN, tempDir, testEnv } from './helpers.ts';

/** `parley start`'s helper threads on one CPU (src/thread-priority.ts) and the store's checkpointer. */

const linux = process.platform === 'linux';
const hasTaskset = linux && spawnSync('taskset', ['--version']).status === 0;

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface ThreadInfo {
  tid: number;
  name: string;
  nice: number;
}

/** Every thread of `pid`: its name and nice value (`stat`'s 19th field, counted after the name's closing parenthesis). */
function threadsOf(pid: number): ThreadInfo[] {
  const out: ThreadInfo[] = [];
  for (const entry of readdirSync(`/proc/${pid}/task`)) {
    const stat = readFileSync(`/proc/${pid}/task/${entry}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    const fields = stat.slice(close + 2).split(' ');
    out.push({ tid: Number(entry), name: stat.slice(stat.indexOf('(') + 1, close), nice: Number(fields[16]) });
  }
  return out;
}

/** Starts `parley start` on the sources (under `taskset -c 0` with `oneCpu`) and resolves once it listens and logged its start line. */
async function startServer(oneCpu: boolean): Promise<{ proc: ChildProcess; started: Record<string, unknown> }> {
  const dir = tempDir();
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const node = [process.execPath, ...SOURCE_NODE_ARGS, PARLEY_BIN, 'start'];
  const [cmd, args] = oneCpu ? ['taskset', ['-c', '0', ...node]] : [node[0]!, node.slice(1)];
  const proc = spawn(cmd, args, {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...testEnv(dir, { PARLEY_LOG_LEVEL: 'info' }) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((done) => proc.on('exit', () => done()));
  cleanups.push(async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGKILL');
      await exited;
    }
  });
  let out = '';
  let err = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const deadline = Date.now() + 20_000;
  for (;;) {
    const line = err.split('\n').find((l) => l.includes('"parley started"'));
    if (listeningEventIn(out) && line) return { proc, started: JSON.parse(line) as Record<string, unknown> };
    if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`server did not start:\n${err}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('thread priorities', { timeout: 40_000 }, () => {
  it.skipIf(!hasTaskset)(
    "on one CPU, the helper threads run 10 nice steps below the main thread; the writer keeps the main thread's",
    async () => {
      const { proc, started } = await startServer(true);
      const threads = threadsOf(proc.pid!);
      const main = threads.find((t) => t.tid === proc.pid)!;
      const helpers = threads.filter((t) => t.name === 'node' && t.tid !== proc.pid);
      // Relative to the main thread's: the test runner itself may run at another nice value.
      const lower = Math.min(19, main.nice + 10);
      expect(helpers.length).toBeGreaterThan(0);
      for (const h of helpers) expect(h).toMatchObject({ nice: lower });
      expect(threads.find((t) => t.name === 'parley-writer')).toMatchObject({ nice: main.nice });
      expect(threads.find((t) => t.name === 'parley-ckpt')).toMatchObject({ nice: lower });
      expect(started.helperThreads).toEqual({ lowered: helpers.length, nice: lower });
    },
  );

  it.skipIf(!linux || availableParallelism() < 2)(
    'with several CPUs, only the checkpointer runs lower (the helpers run beside the main thread)',
    async () => {
      const { proc, started } = await startServer(false);
      const threads = threadsOf(proc.pid!);
      const main = threads.find((t) => t.tid === proc.pid)!;
      for (const t of threads.filter((x) => x.name === 'node')) expect(t).toMatchObject({ nice: main.nice });
      expect(threads.find((t) => t.name === 'parley-writer')).toMatchObject({ nice: main.nice });
      expect(threads.find((t) => t.name === 'parley-ckpt')).toMatchObject({ nice: Math.min(19, main.nice + 10) });
      expect(started.helperThreads).toEqual({ unchanged: 'several CPUs' });
    },
  );
});
