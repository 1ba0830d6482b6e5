import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import {
  checkPostgresStore,
  lockNode,
  NodeLockedError,
  openImportTarget,
  openPostgresImportTarget,
  openPostgresStore,
  openPostgresStoreReader,
  parsePostgresUrl,
  postgresFailureKind,
  PostgresUrlError,
  readPostgresImportMarks,
  StaleEpochError,
  StoreIntegrityError,
  type ImportRepository,
} from '../src/index.ts';
import { createTestSchema, postgresReachable, TEST_POSTGRES_URL, withSearchPath, type TestSchema } from '../src/testing.ts';

const pgUp = await postgresReachable();

describe('store.postgres_url', () => {
  it('finds the schema in search_path (encoded or not), defaults to public, never shows the password', () => {
    expect(parsePostgresUrl('postgres://postgres@127.0.0.1:5432/test?options=-c%20search_path%3Dfoo').schema).toBe('foo');
    expect(parsePostgresUrl('postgresql://u@h/db?options=-c+search_path%3Dbar,public').schema).toBe('bar');
    expect(parsePostgresUrl('postgres://u@h/db?options=--search_path%3Dbaz%20-c%20statement_timeout%3D5s').schema).toBe('baz');
    const plain = parsePostgresUrl('postgres://u:s3cret@db.example:6543/app');
    expect(plain).toMatchObject({ schema: 'public', host: 'db.example', port: 6543, database: 'app' });
    expect(plain.display).toBe('postgres://u:***@db.example:6543/app');
  });

  it('refuses what it cannot carry out, with the reason and without the password', () => {
    const refused = (url: string) => {
      try {
        parsePostgresUrl(url);
      } catch (err) {
        expect(err).toBeInstanceOf(PostgresUrlError);
        expect((err as Error).message).not.toContain('s3cret');
        return (err as Error).message;
      }
      throw new Error(`accepted ${url}`);
    };
    expect(refused('mysql://u:s3cret@h/db')).toMatch(/scheme "mysql:"/);
    expect(refused('postgres://u:s3cret@h/')).toMatch(/no database name/);
    expect(refused('not a url')).toMatch(/not a URL/);
    expect(refused('postgres://u:s3cret@h/db?schema=x')).toMatch(/parameter "schema" is not supported/);
    expect(refused('postgres://u:s3cret@h/db?options=-c%20search_path%3D%22Foo%22')).toMatch(/lower-case name/);
    expect(refused('postgres://u:s3cret@h/db?options=-c%20search_path%3D%24user')).toMatch(/lower-case name/);
    expect(refused('postgres://u:s3cret@h/db?options=search_path%3Dx')).toMatch(/only -c name=value/);
  });

  it('classifies PostgreSQL failures by SQLSTATE', () => {
    expect(postgresFailureKind({ code: '53100' })).toBe('disk_full');
    expect(postgresFailureKind({ code: '25006' })).toBe('read_only');
    expect(postgresFailureKind({ code: '57P01' })).toBe('io_error');
    expect(postgresFailureKind({ code: 'ECONNREFUSED' })).toBe('io_error');
    expect(postgresFailureKind(new Error('Connection terminated unexpectedly'))).toBe('io_error');
    expect(postgresFailureKind({ code: '40P01' })).toBe('busy');
    expect(postgresFailureKind({ code: '23505' })).toBeUndefined();
    expect(postgresFailureKind({ code: '42601' })).toBeUndefined();
  });
});

describe.skipIf(!pgUp)('the PostgreSQL store', () => {
  const schemas: TestSchema[] = [];
  const fresh = (prefix = 'parley_pg') => {
    const s = createTestSchema(prefix);
    schemas.push(s);
    return s;
  };
  afterAll(async () => {
    for (const s of schemas) await s.drop();
  });

  it('keeps each schema to itself: two stores in one database see only their own rows', async () => {
    const a = fresh();
    const b = fresh();
    const sa = await openPostgresStore({ url: a.url, poolSize: 2 });
    const sb = await openPostgresStore({ url: b.url, poolSize: 2 });
    try {
      await sa.channels.addSystemUids(['only-a']);
      expect(await sb.channels.listSystemUids()).toEqual([]);
      expect(await sa.channels.listSystemUids()).toEqual(['only-a']);
      expect(sa.schema).toBe(a.schema);
      expect(sa.label).toContain(`schema ${a.schema}`);
    } finally {
      await sa.close();
      await sb.close();
    }
    // Reopening migrates nothing and keeps the rows.
    const again = await openPostgresStore({ url: a.url, poolSize: 1, mustExist: true });
    expect(await again.channels.listSystemUids()).toEqual(['only-a']);
    await again.close();
  });

  it('opens with mustExist only a schema that holds the store, naming it', async () => {
    const s = fresh();
    await expect(openPostgresStore({ url: s.url, mustExist: true })).rejects.toThrow(StoreIntegrityError);
    await expect(openPostgresStore({ url: s.url, mustExist: true })).rejects.toThrow(/holds no Parley tables.*data directory/s);
    const unreachable = 'postgres://postgres:s3cret@127.0.0.1:1/test?options=-c%20search_path%3Dx';
    const err = (await openPostgresStore({ url: unreachable }).then(
      () => new Error('opened'),
      (e: unknown) => e,
    )) as Error;
    expect(err).toBeInstanceOf(StoreIntegrityError);
    expect(err.message).toMatch(/cannot connect/);
    expect(err.message).not.toContain('s3cret');
  });

  it('holds one lock per node id and schema; a crash (connection gone) frees it', async () => {
    const s = fresh();
    const lost: Error[] = [];
    const first = await lockNode(s.url, 7, (e) => lost.push(e));
    await expect(lockNode(s.url, 7, () => {})).rejects.toBeInstanceOf(NodeLockedError);
    const other = await lockNode(s.url, 8, () => {});
    const elsewhere = await lockNode(fresh().url, 7, () => {});
    // What a SIGKILL does to the holder: the server ends its session.
    const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await admin.connect();
    await admin.query(
      `select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'parley-node-lock' and pid in
       (select pid from pg_locks where locktype = 'advisory' and objid = 7 and classid = hashtext($1)::oid)`,
      [`parley:${s.schema}`],
    );
    await admin.end();
    await expect.poll(() => lost.length, { timeout: 5000 }).toBe(1);
    const next = await lockNode(s.url, 7, () => {});
    await next.release();
    await first.release();
    await other.release();
    await elsewhere.release();
  });

  it('an append fenced by the lease waits for a takeover in progress and then fails, writing nothing', async () => {
    const s = fresh();
    const store = await openPostgresStore({ url: s.url, poolSize: 3 });
    const admin = new pg.Client({ connectionString: s.url });
    await admin.connect();
    try {
      const lease = (await store.leases.acquire(4, 1, 60_000))!;
      await admin.query('begin');
      // Another node taking the slot over: it holds the lease row while its transaction runs.
      await admin.query('select epoch from slot_leases where slot = 4 for update');
      let settled = false;
      const append = store.messages
        .appendBatch(
          [
            {
              channelId: 'c',
              channelType: 2,
              messageSeq: 1,
              messageId: 1n,
              clientMsgNo: '',
              fromUid: 'u',
              setting: 0,
              flags: 0,
              expire: 0,
              topic: '',
              createdAt: 1,
              payload: new Uint8Array([1]),
            },
          ],
          [],
          { slot: 4, epoch: lease.epoch },
        )
        .finally(() => (settled = true));
      append.catch(() => {});
      await new Promise((r) => setTimeout(r, 200));
      expect(settled).toBe(false);
      await admin.query('update slot_leases set owner = 2, epoch = epoch + 1 where slot = 4');
      await admin.query('commit');
      await expect(append).rejects.toBeInstanceOf(StaleEpochError);
      expect(await store.messages.loadTail('c', 2)).toBe(0);
    } finally {
      await admin.end();
      await store.close();
    }
  });

  it('`store check` reads every row and, where amcheck is installed, checks every index', async () => {
    // A database of its own: installing an extension into the shared one would change it for everyone.
    const name = `parley_amcheck_${process.pid}`;
    const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await admin.connect();
    await admin.query(`create database ${name}`);
    try {
      const base = new URL(TEST_POSTGRES_URL);
      base.pathname = `/${name}`;
      const url = withSearchPath(base.href, 'parley');
      const store = await openPostgresStore({ url, poolSize: 1 });
      await store.channels.addSystemUids(['a', 'b']);
      await store.close();
      const without = await checkPostgresStore(url);
      expect(without).toMatchObject({ ok: true, problems: [] });
      expect(without.notes).toEqual(['read 2 rows of 8 tables', expect.stringMatching(/^indexes not checked: the amcheck extension/)]);
      const c = new pg.Client({ connectionString: base.href });
      await c.connect();
      await c.query('create extension amcheck');
      await c.end();
      const checked = await checkPostgresStore(url);
      expect(checked).toMatchObject({ ok: true, problems: [] });
      expect(checked.notes?.[1]).toMatch(/^checked (1[0-9]|[2-9][0-9]) indexes with amcheck$/);
    } finally {
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    }
  });

  it('imports into a new schema only, reads it back read-only, and fingerprints it exactly as SQLite does', async () => {
    const rows = async (target: ImportRepository) => {
      await target.devices([{ uid: 'u1', device_flag: 1, device_level: 1, device_id: 'd', token_sha256: 'ab'.repeat(32), updated_at: 5 }]);
      await target.channels([
        { channel_id: 'Zed', channel_type: 2, ban: 0, disband: 0, large: 0, send_ban: 0, allow_stranger: 0, created_at: 1, updated_at: 2 },
        { channel_id: 'abc', channel_type: 2, ban: 1, disband: 0, large: 0, send_ban: 0, allow_stranger: 0, created_at: 1, updated_at: 2 },
      ]);
      await target.memberLists([{ channel_id: 'abc', channel_type: 2, list: 'allow', uid: 'é' }]);
      await target.systemUids(['sys']);
      await target.messages([
        {
          channel_id: 'abc',
          channel_type: 2,
          message_seq: 1,
          message_id: 9_223_372_036_854_775_000n,
          client_msg_no: 'x',
          from_uid: 'u1',
          setting: 0,
          flags: 0,
          expire: 0,
          topic: '',
          created_at: 10,
          payload: new Uint8Array([0, 1, 2, 250]),
        },
      ]);
      await target.channelLogs([{ channel_id: 'abc', channel_type: 2, tail_seq: 4 }]);
      await target.memberships([{ channel_id: 'abc', channel_type: 2, uid: 'u1', join_seq: 1, updated_at: 3, unread_count: 2 }]);
      await target.cmdBindings([{ uid: 'u1', channel_id: 'abc____cmd', channel_type: 2, start_seq: 1, updated_at: 3 }]);
    };
    const s = fresh();
    // An import killed half-way leaves its partial mark: only the same identity may discard it.
    const killed = await openPostgresImportTarget(s.url, 'import-a');
    await killed.transaction(async (r) => r.systemUids(['half']));
    await killed.close();
    expect(await readPostgresImportMarks(s.url)).toMatchObject({ partial: 'import-a' });
    await expect(openPostgresImportTarget(s.url, 'import-b', 'import-b')).rejects.toThrow(/not empty/);
    const target = await openPostgresImportTarget(s.url, 'import-a', 'import-a');
    await target.transaction(rows);
    const pgDigest = await target.seal();
    await target.finish('{"done":true}');
    await target.close();
    const marks = await readPostgresImportMarks(s.url);
    expect(marks.partial).toBeUndefined();
    expect(marks.finished).toBe('{"done":true}');
    expect(marks.tables).toContain('messages');

    const dir = mkdtempSync(join(tmpdir(), 'parley-digest-'));
    try {
      const lite = await openImportTarget(dir);
      await lite.transaction(rows);
      expect(pgDigest).toEqual(await lite.seal());
      await lite.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }

    await expect(openPostgresImportTarget(s.url, 'import-a', 'import-a')).rejects.toThrow(/not empty/);
    const reader = await openPostgresStoreReader(s.url);
    try {
      expect(await reader.contentDigest()).toEqual(pgDigest);
      const msgs = await reader.repositories.messages.range('abc', 2, 1, 10, 10, false);
      expect(msgs.messages[0]!.messageId).toBe(9_223_372_036_854_775_000n);
      expect(await reader.repositories.messages.loadTail('abc', 2)).toBe(4);
      expect(
        await reader.repositories.messages.loadTails([
          { channelId: 'none', channelType: 2 },
          { channelId: 'abc', channelType: 2 },
          { channelId: 'abc', channelType: 1 },
        ]),
      ).toEqual([0, 4, 0]);
      await expect(reader.repositories.channels.addSystemUids(['nope'])).rejects.toMatchObject({ code: '25006' });
    } finally {
      await reader.close();
    }
    await expect(openPostgresStoreReader(fresh().url)).rejects.toThrow(/holds no Parley tables/);
  });
});
