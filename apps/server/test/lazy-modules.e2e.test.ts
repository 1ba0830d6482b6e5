/**
 * What a node loads depends on what it runs: an embedded (SQLite) node never
 * loads the PostgreSQL driver (`pg`) or the NATS client (a few MiB of heap and
 * code each), while a cluster node on PostgreSQL and NATS loads both when it
 * needs them and works as before. Each server runs as its own process with a
 * probe preloaded that, on SIGUSR2, prints which of the two packages that
 * process has loaded.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { listeningEventIn, type ListeningEvent } from '@parley/shared';
import { createTestSchema, postgresReachable } from '@parley/store/testing';
import { SOURCE_NODE_ARGS } from '../../../test-support/source-node.ts';
import { connectRpc, get, PARLEY_BIN, storeToken, tempDir, testEnv } from './helpers.ts';

const pgUp = await postgresReachable();

/** The probe: on SIGUSR2, one stdout line naming the optional packages in the CommonJS module cache. */
const PROBE = `data:text/javascript,${encodeURIComponent(`
import { createRequire } from 'node:module';
process.on('SIGUSR2', () => {
  const names = new Set();
  for (const p of Object.keys(createRequire(process.cwd() + '/').cache)) {
    const m = /[\\\\/]node_modules[\\\\/](pg|nats)[\\\\/]/.exec(p);
    if (m) names.add(m[1]);
  }
  process.stdout.write(JSON.stringify({ loaded_optional: [...names].sort() }) + '\\n');
});
`)}`;

interface Probed {
  proc: ChildProcess;
  api: string;
  ws: string;
  /** The optional packages the process has loaded so far. */
  loaded(): Promise<string[]>;
  stop(): Promise<void>;
}

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function startProbed(env: Record<string, string>): Promise<Probed> {
  const proc = spawn(process.execPath, [...SOURCE_NODE_ARGS, '--import', PROBE, PARLEY_BIN, 'start'], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((done) => proc.once('exit', () => done()));
  const stop = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    proc.kill('SIGTERM');
    await exited;
  };
  cleanups.push(stop);
  let out = '';
  let err = '';
  let answered = 0;
  const waiters: Array<() => void> = [];
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) => {
    let started: ListeningEvent | undefined;
    proc.once('exit', (code) => {
      if (!started) reject(new Error(`server exited (${code}) before listening:\n${err}`));
    });
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const answers = out.split('\n').filter((l) => l.startsWith('{"loaded_optional"'));
      while (answered < answers.length && waiters.length > 0) {
        answered++;
        waiters.shift()!();
      }
      if (started) return;
      started = listeningEventIn(out);
      if (!started) return;
      resolve({
        proc,
        api: `http://${started.api}`,
        ws: `ws://${started.ws}`,
        stop,
        loaded: () =>
          new Promise<string[]>((done) => {
            const index = answered;
            waiters.push(() => {
              const line = out.split('\n').filter((l) => l.startsWith('{"loaded_optional"'))[index]!;
              done((JSON.parse(line) as { loaded_optional: string[] }).loaded_optional);
            });
            proc.kill('SIGUSR2');
          }),
      });
    });
  });
}

describe('optional packages', { timeout: 60_000 }, () => {
  it('an embedded node loads neither pg nor nats, also after a CONNECT', async () => {
    const dir = tempDir();
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const s = await startProbed(testEnv(dir));
    await storeToken(s.api, 'u1', 'u1-token');
    const c = await connectRpc(s.ws, 'u1', 'u1-token');
    c.close();
    expect(await s.loaded()).toEqual([]);
  });

  it.skipIf(!pgUp)('a cluster node on PostgreSQL and NATS loads both and serves as before', async () => {
    const dir = tempDir();
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const schema = createTestSchema('parley_lazy');
    cleanups.push(() => schema.drop());
    const s = await startProbed(
      testEnv(dir, {
        PARLEY_STORE_DRIVER: 'postgres',
        PARLEY_STORE_POSTGRES_URL: schema.url,
        PARLEY_STORE_POSTGRES_POOL_SIZE: '4',
        PARLEY_CLUSTER_ENABLED: 'true',
        PARLEY_CLUSTER_ID: `t${randomBytes(5).toString('hex')}`,
      }),
    );
    expect(await s.loaded()).toEqual(['nats', 'pg']);
    await storeToken(s.api, 'u1', 'u1-token');
    const c = await connectRpc(s.ws, 'u1', 'u1-token');
    c.close();
    expect((await get(s.api, '/healthz')).status).toBe(200);
  });
});
