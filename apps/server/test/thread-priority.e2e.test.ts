/**
 * The bin lowers the priority of the helper threads that exist when it starts (V8's garbage-collector
 * workers and the module loader's pool threads) and leaves the main thread and the store's writer thread,
 * started later, at normal priority: read from /proc of a real server process.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnServer, tempDir, testEnv, type SpawnedServer } from './helpers.ts';

/** The nice value of each thread of `pid` (field 19 of /proc/<pid>/task/<tid>/stat). */
function niceByThread(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    out.set(Number(tid), Number(fields[16]));
  }
  return out;
}

let server: SpawnedServer | undefined;
afterEach(async () => {
  if (server && server.proc.exitCode === null) {
    server.proc.kill('SIGKILL');
    await server.exited;
  }
  server = undefined;
});

describe.runIf(process.platform === 'linux')('helper thread priority', () => {
  it('runs the start-up helper threads at nice 19 and the main and writer threads at 0', async () => {
    server = await spawnServer(testEnv(tempDir()));
    const pid = server.proc.pid!;
    const nice = niceByThread(pid);
    expect(nice.get(pid)).toBe(0);
    const lowered = [...nice].filter(([tid, n]) => tid !== pid && n === 19);
    const normal = [...nice].filter(([tid, n]) => tid !== pid && n === 0);
    // V8's platform workers exist before any JavaScript runs (4 by default).
    expect(lowered.length).toBeGreaterThanOrEqual(4);
    // The SQLite writer and checkpointer threads (and their isolates' threads) were started after.
    expect(normal.length).toBeGreaterThanOrEqual(2);
  });
});
