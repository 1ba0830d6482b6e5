import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { NodeLockedError } from '@parley/store';
import { SOURCE_NODE_ARGS } from '../../../test-support/source-node.ts';
import { postgresUp, storeEnv, type StoreEnv } from '../../../test-support/stores.ts';
import { ConfigError, loadConfig } from '../src/config/config.ts';
import { DataDirError } from '../src/data-dir/data-dir.ts';
import { createLogger } from '../src/log.ts';
import { startServer } from '../src/server.ts';
import { PARLEY_BIN, post, startTestServer, storeToken, tempDir, testEnv } from './helpers.ts';

const problemsOf = (env: Record<string, string>): string[] => {
  try {
    loadConfig(undefined, testEnv('/nonexistent', env));
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
};

describe('store.* options', () => {
  it('refuses an incomplete or contradictory store configuration, never showing the password', () => {
    expect(problemsOf({ PARLEY_STORE_DRIVER: 'postgres' })).toEqual(['store.postgres_url is required when store.driver is "postgres"']);
    expect(problemsOf({ PARLEY_STORE_POSTGRES_URL: 'postgres://u@h/db' })).toEqual([
      'store.postgres_url is set but store.driver is "sqlite": set store.driver = "postgres" or remove it',
    ]);
    expect(problemsOf({ PARLEY_STORE_POSTGRES_POOL_SIZE: '3' })).toEqual([
      'store.postgres_pool_size is set but store.driver is "sqlite": it applies to PostgreSQL only',
    ]);
    const bad = problemsOf({ PARLEY_STORE_DRIVER: 'postgres', PARLEY_STORE_POSTGRES_URL: 'postgres://u:hunter22@h/db?schema=x' });
    expect(bad).toHaveLength(1);
    expect(bad[0]).toMatch(/^store.postgres_url: parameter "schema" is not supported/);
    expect(bad[0]).not.toContain('hunter22');
    expect(problemsOf({ PARLEY_STORE_DRIVER: 'mysql' })[0]).toMatch(/PARLEY_STORE_DRIVER/);
    // The SQLite WAL buffer: SQLite only, and `on` only where commits fsync.
    expect(
      problemsOf({
        PARLEY_STORE_DRIVER: 'postgres',
        PARLEY_STORE_POSTGRES_URL: 'postgres://u@h/db',
        PARLEY_STORE_SQLITE_WAL_BUFFER: 'off',
      }),
    ).toEqual(['store.sqlite_wal_buffer is set but store.driver is "postgres": it applies to SQLite only']);
    expect(problemsOf({ PARLEY_STORE_SQLITE_WAL_BUFFER: 'on', PARLEY_STORE_SYNC: 'normal' })).toEqual([
      'store.sqlite_wal_buffer = "on" needs store.sync = "full": without a commit fsync there is no point to write the gathered WAL frames at',
    ]);
    expect(problemsOf({ PARLEY_STORE_SQLITE_WAL_BUFFER: 'sometimes' })[0]).toMatch(/PARLEY_STORE_SQLITE_WAL_BUFFER/);
    expect(problemsOf({ PARLEY_STORE_SQLITE_WAL_BUFFER: 'off', PARLEY_STORE_SYNC: 'normal' })).toEqual([]);
    expect(loadConfig(undefined, testEnv('/nonexistent', {})).store.sqliteWalBuffer).toBe('auto');
    expect(problemsOf({ PARLEY_STORE_DRIVER: 'postgres', PARLEY_STORE_POSTGRES_URL: 'postgres://u@h/db' })).toEqual([]);
    const cfg = loadConfig(
      undefined,
      testEnv('/nonexistent', { PARLEY_STORE_DRIVER: 'postgres', PARLEY_STORE_POSTGRES_URL: 'postgres://u:pw@h/db' }),
    );
    expect(cfg.store).toMatchObject({ driver: 'postgres', postgresUrl: 'postgres://u:pw@h/db', postgresPoolSize: 10 });
  });
});

describe('store.sqlite_wal_buffer on a running node', () => {
  it('a node started with it on gathers its commits and says so; off, it says why not', async () => {
    for (const mode of ['on', 'off'] as const) {
      const lines: string[] = [];
      const t = await startTestServer({ PARLEY_STORE_SQLITE_WAL_BUFFER: mode, PARLEY_LOG_LEVEL: 'info' }, (line) => lines.push(line));
      try {
        const said = lines
          .map((l) => JSON.parse(l) as { msg: string; walBuffer?: boolean; reason?: string })
          .find((l) => l.msg === 'store: SQLite');
        expect(said).toMatchObject(
          mode === 'on' ? { walBuffer: true, reason: 'extension loaded' } : { walBuffer: false, reason: 'store.sqlite_wal_buffer = off' },
        );
      } finally {
        await t.close();
      }
    }
  });
});

describe.skipIf(!postgresUp)('a node on PostgreSQL', { timeout: 60_000 }, () => {
  const envs: StoreEnv[] = [];
  const dirs: string[] = [];
  const fresh = () => {
    const s = storeEnv('postgres', 'parley_node');
    envs.push(s);
    return s;
  };
  const dir = () => {
    const d = tempDir();
    dirs.push(d);
    return d;
  };
  afterAll(async () => {
    for (const s of envs) await s.drop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const silent = createLogger('silent');

  it('records its store in the data directory and refuses another store for it later', async () => {
    const store = fresh();
    const d = dir();
    const s = await startServer(loadConfig(undefined, testEnv(d, store.env)), silent);
    await s.close();
    const format = JSON.parse(readFileSync(join(d, 'data-format.json'), 'utf8'));
    expect(format.store).toEqual({ driver: 'postgres', host: '127.0.0.1', port: 5432, database: 'test', schema: store.schema });
    expect(JSON.stringify(format)).not.toMatch(/postgres:\/\//);

    await expect(startServer(loadConfig(undefined, testEnv(d)), silent)).rejects.toThrow(DataDirError);
    await expect(startServer(loadConfig(undefined, testEnv(d)), silent)).rejects.toThrow(
      /the config opens SQLite .* but .*data-format.json says this directory's store is PostgreSQL database "test" schema "parley_node_/,
    );
    await expect(startServer(loadConfig(undefined, testEnv(d, fresh().env)), silent)).rejects.toThrow(/schema "parley_node_.*" but/);
    // The schema's rows went away (restored elsewhere, dropped by mistake): the directory says a store was here.
    await store.drop();
    await expect(startServer(loadConfig(undefined, testEnv(d, store.env)), silent)).rejects.toThrow(/holds no Parley tables/);
  });

  it('refuses to start when PostgreSQL does not answer, naming it without the password', async () => {
    const url = 'postgres://postgres:s3cret@127.0.0.1:1/test?options=-c%20search_path%3Dnowhere';
    const config = loadConfig(undefined, testEnv(dir(), { PARLEY_STORE_DRIVER: 'postgres', PARLEY_STORE_POSTGRES_URL: url }));
    const err = (await startServer(config, silent).then(
      () => new Error('started'),
      (e: unknown) => e,
    )) as Error;
    expect(err.message).toMatch(/^store postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:1\/test.* refused:\n {2}- cannot connect: ECONNREFUSED/);
    expect(err.message).not.toContain('s3cret');
  });

  it('shares a schema with other node ids, never with a second process of its own node id', async () => {
    const store = fresh();
    const one = await startServer(loadConfig(undefined, testEnv(dir(), { ...store.env, PARLEY_NODE_ID: '1' })), silent);
    try {
      await expect(startServer(loadConfig(undefined, testEnv(dir(), { ...store.env, PARLEY_NODE_ID: '1' })), silent)).rejects.toThrow(
        NodeLockedError,
      );
      const two = await startServer(loadConfig(undefined, testEnv(dir(), { ...store.env, PARLEY_NODE_ID: '2' })), silent);
      const api1 = `http://127.0.0.1:${one.addresses.api.port}`;
      const api2 = `http://127.0.0.1:${two.addresses.api.port}`;
      await storeToken(api1, 'shared-user', 'tok-1');
      // The second node reads the same rows (no cache of its own yet for this uid).
      expect((await post(api2, '/user/token', { uid: 'other', token: 'x', device_flag: 1 })).status).toBe(200);
      const sent = await post(api1, '/message/send', { from_uid: 'a', channel_id: 'b', channel_type: 1, payload: 'aGk=' });
      expect(sent.status).toBe(200);
      const synced = await post(api2, '/channel/messagesync', { login_uid: 'b', channel_id: 'a', channel_type: 1, pull_mode: 1 });
      expect(synced.json.messages.map((m: { client_msg_no: string; message_seq: number }) => m.message_seq)).toEqual([1]);
      await two.close();
    } finally {
      await one.close();
    }
  });

  it('is ready on a working store and not ready while the store cannot commit in time', async () => {
    const store = fresh();
    const t = await startTestServer(store.env);
    const admin = new pg.Client({ connectionString: store.url });
    try {
      const ready = await fetch(`${t.api}/readyz`);
      expect([ready.status, await ready.json()]).toEqual([200, { ready: true, parts: { routes: true, slots: true, channels: true } }]);
      await admin.connect();
      await admin.query('begin');
      // Another session holds the table the write probe commits to (as a long migration or a backup lock would).
      await admin.query('lock table meta in access exclusive mode');
      // A committed probe runs at most once a second while writes succeed: within a few calls one meets the lock.
      let body: { ready: boolean; reason?: string } = { ready: true };
      await expect
        .poll(
          async () => {
            const r = await fetch(`${t.api}/readyz`);
            body = (await r.json()) as typeof body;
            return r.status;
          },
          { timeout: 10_000, interval: 300 },
        )
        .toBe(503);
      expect(body.reason).toMatch(/^channel not ready: store writes failing \(busy: 57014 canceling statement due to statement timeout\)/);
      await admin.query('rollback');
      await expect.poll(async () => (await fetch(`${t.api}/readyz`)).status, { timeout: 10_000 }).toBe(200);
    } finally {
      await admin.end().catch(() => {});
      await t.close();
    }
  });

  it('`parley store check` reads a PostgreSQL store and says what it checked; an empty schema is refused', async () => {
    const store = fresh();
    const d = dir();
    const s = await startServer(loadConfig(undefined, testEnv(d, store.env)), silent);
    await storeToken(`http://127.0.0.1:${s.addresses.api.port}`, 'u1', 't1');
    await s.close();
    const run = (env: Record<string, string>) =>
      spawnSync(process.execPath, [...SOURCE_NODE_ARGS, PARLEY_BIN, 'store', 'check'], {
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...testEnv(d, env) },
        encoding: 'utf8',
        timeout: 30_000,
      });
    const ok = run(store.env);
    expect(ok.status).toBe(0);
    const report = JSON.parse(ok.stdout);
    expect(report).toMatchObject({ ok: true, problems: [], path: expect.stringContaining(`(schema ${store.schema})`) });
    expect(report.notes[0]).toMatch(/^read \d+ rows of 8 tables$/);
    const empty = run(fresh().env);
    expect(empty.status).toBe(1);
    expect(JSON.parse(empty.stdout)).toMatchObject({ ok: false, problems: ['the schema holds no Parley tables'] });
  });
});
