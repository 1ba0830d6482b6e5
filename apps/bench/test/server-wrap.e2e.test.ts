/**
 * `PARLEY_BENCH_SERVER_WRAP`: the Parley server run under a measuring tool. Some tools (`strace -f`)
 * run the server as their child and, stopped themselves, leave it running; the bench stops the
 * tool's whole process group, so no server outlives its run to take the next run's core.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { SOURCE_NODE_ARGS } from '../../../test-support/source-node.ts';
import { installCleanup } from '../src/children.ts';
import { startParley } from '../src/drivers/parley-server.ts';

const dir = mkdtempSync(join(tmpdir(), 'parley-bench-wrap-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

it("stops a wrapped server's whole process group, the server the tool runs as its child included", async () => {
  installCleanup();
  // A tool that runs its arguments as a child and, sent SIGTERM, exits without stopping it.
  const tool = join(dir, 'leaves-its-child.sh');
  writeFileSync(tool, '#!/bin/sh\ntrap \'exit 0\' TERM\n"$@" &\nwait\n');
  chmodSync(tool, 0o755);
  const before = process.env.PARLEY_BENCH_SERVER_WRAP;
  process.env.PARLEY_BENCH_SERVER_WRAP = tool;
  let child = 0;
  try {
    const server = await startParley(SOURCE_NODE_ARGS, undefined, {}, false);
    // The server itself: the tool's child, which answers on the API.
    child = Number(
      execFileSync('pgrep', ['-P', String(server.pid)], { encoding: 'utf8' })
        .trim()
        .split('\n')[0],
    );
    expect(child).toBeGreaterThan(0);
    expect((await fetch(`${server.api}/healthz`)).status).toBe(200);
    await server.stop();
    expect(alive(server.pid)).toBe(false);
    expect(alive(child)).toBe(false);
  } finally {
    // Should it fail, nothing is left running either.
    if (child > 0 && alive(child)) process.kill(child, 'SIGKILL');
    if (before === undefined) delete process.env.PARLEY_BENCH_SERVER_WRAP;
    else process.env.PARLEY_BENCH_SERVER_WRAP = before;
  }
}, 60_000);
