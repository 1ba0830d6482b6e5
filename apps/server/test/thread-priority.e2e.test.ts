import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import process from 'node:process';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnServer, tempDir, testEnv } from './helpers.ts';

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

/** Starts `parley start` on the sources (under `taskset -c 0` with `oneCpu`) and resolves once it logged its start line. */
async function startServer(oneCpu: boolean): Promise<{ pid: number; started: Record<string, unknown> }> {
  const dir = tempDir();
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const server = await spawnServer(testEnv(dir, { PARLEY_LOG_LEVEL: 'info' }), oneCpu ? { wrap: ['taskset', '-c', '0'] } : {});
  cleanups.push(async () => void (await server.stop()));
  // The start line comes after the `listening` event.
  const deadline = Date.now() + 10_000;
  for (;;) {
    const line = server
      .stderr()
      .split('\n')
      .find((l) => l.includes('"parley started"'));
    if (line) return { pid: server.proc.pid!, started: JSON.parse(line) as Record<string, unknown> };
    if (Date.now() > deadline) throw new Error(`no start line:\n${server.stderr()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('thread priorities', { timeout: 40_000 }, () => {
  it.skipIf(!hasTaskset)(
    "on one CPU, the helper threads run 10 nice steps below the main thread; the writer keeps the main thread's",
    async () => {
      const { pid, started } = await startServer(true);
      const threads = threadsOf(pid);
      const main = threads.find((t) => t.tid === pid)!;
      const helpers = threads.filter((t) => t.name === 'node' && t.tid !== pid);
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
      const { pid, started } = await startServer(false);
      const threads = threadsOf(pid);
      const main = threads.find((t) => t.tid === pid)!;
      for (const t of threads.filter((x) => x.name === 'node')) expect(t).toMatchObject({ nice: main.nice });
      expect(threads.find((t) => t.name === 'parley-writer')).toMatchObject({ nice: main.nice });
      expect(threads.find((t) => t.name === 'parley-ckpt')).toMatchObject({ nice: Math.min(19, main.nice + 10) });
      expect(started.helperThreads).toEqual({ unchanged: 'several CPUs' });
    },
  );
});
