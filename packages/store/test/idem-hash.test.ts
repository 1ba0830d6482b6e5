import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { migrationProvider } from '../src/migrations.ts';
import { createRepositories, openEmbeddedStore, openImportTarget, openMemoryStore, openSqlite, type StoredMessage } from '../src/index.ts';
import { idemHash } from '../src/sqlite/idem-hash.ts';
import { createTestSchema, postgresReachable, TEST_POSTGRES_URL } from '../src/testing.ts';
import { storedMessage } from './support/seq-message.ts';
import { openPostgresStore } from '../src/postgres/store.ts';
import { checkStoreFile, STORE_FILE } from '../src/sqlite/integrity.ts';
import { IDEMPOTENCY_LOOKUP_SQL } from '../src/sqlite/writer-protocol.ts';
import { messageRow } from '../src/repositories/message.repository.ts';

/**
 * The embedded store's idempotency index on one 64-bit hash of the key
 * (migration `0005_sqlite_idem_hash`): the hash itself, the migration of a
 * store written with the earlier schema, every insert path filling it, and
 * look-ups that never take another key with the same hash for a hit.
 */
const pgUp = await postgresReachable();
const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'parley-idem-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function message(channelId: string, seq: number, extra: Partial<StoredMessage> = {}): StoredMessage {
  return storedMessage(channelId, seq, {
    messageId: (1n << 62n) + BigInt(seq),
    clientMsgNo: `cmn-${seq}`,
    payload: new Uint8Array([seq & 0xff, 7]),
    ...extra,
  });
}

const key = (channelId: string, fromUid: string, clientMsgNo: string) => ({ channelId, channelType: 1, fromUid, clientMsgNo });

/** Index names and the rows missing their hash, read over a connection of its own. */
function inspect(dir: string) {
  const raw = new SqliteDatabase(join(dir, STORE_FILE), { readonly: true });
  try {
    const indexes = (
      raw.prepare("select name from sqlite_master where type = 'index' and tbl_name = 'messages'").all() as { name: string }[]
    )
      .map((r) => r.name)
      .sort();
    const { missing } = raw.prepare("select count(*) as missing from messages where client_msg_no <> '' and idem_hash is null").get() as {
      missing: number;
    };
    const { extra } = raw.prepare("select count(*) as extra from messages where client_msg_no = '' and idem_hash is not null").get() as {
      extra: number;
    };
    return { indexes, missing, extra };
  } finally {
    raw.close();
  }
}

describe('idempotency hash', { timeout: 30_000 }, () => {
  it('is FNV-1a 64 of an unambiguous encoding of the four fields, as a signed 64-bit value', () => {
    // The definition, in BigInt arithmetic: the store's 32-bit-halves version must give the same values.
    const M = (1n << 64n) - 1n;
    const reference = (channelId: string, channelType: number, fromUid: string, clientMsgNo: string) => {
      let h = 0xcbf29ce484222325n;
      const step = (v: number) => (h = ((h ^ BigInt(v)) * 0x100000001b3n) & M);
      const str = (s: string) => [s.length & 0xffff, s.length >>> 16, ...Array.from(s, (_, i) => s.charCodeAt(i))].forEach(step);
      [channelType & 0xffff, channelType >>> 16].forEach(step);
      [channelId, fromUid, clientMsgNo].forEach(str);
      return BigInt.asIntN(64, h);
    };
    let seed = 7;
    const rnd = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    const text = () => String.fromCharCode(...Array.from({ length: rnd(40) }, () => rnd(65536)));
    for (let i = 0; i < 2000; i++) {
      const k = [text(), rnd(2 ** 31), text(), text()] as const;
      expect(idemHash(...k)).toBe(reference(...k));
    }
    // Pinned: stored hashes must keep matching the function that looks them up.
    expect(idemHash('g', 2, 'alice', 'c1')).toBe(-5_552_054_365_249_286_580n);
    expect(idemHash('ab', 1, 'c', 'x')).not.toBe(idemHash('a', 1, 'bc', 'x'));
    expect(idemHash('a', 1, 'b', 'cx')).not.toBe(idemHash('a', 1, 'bc', 'x'));
    expect(idemHash('a', 1, 'b', 'c')).not.toBe(idemHash('a', 11, 'b', 'c'));
    let negative = 0;
    for (let i = 0; i < 200; i++) {
      const h = idemHash(`ch${i}`, 1, `u${i}`, `n${i}`);
      expect(h >= -(1n << 63n) && h < 1n << 63n).toBe(true);
      if (h < 0n) negative++;
    }
    // Both halves of the range are used (a sign lost on the way would show here).
    expect(negative).toBeGreaterThan(50);
    expect(negative).toBeLessThan(150);
  });

  it('the look-up seeks messages_by_idem_hash; the four-column index is gone', async () => {
    const dir = tempDir();
    const store = await openEmbeddedStore({ dataDir: dir, sync: 'normal' });
    await store.close();
    const raw = new SqliteDatabase(join(dir, STORE_FILE), { readonly: true });
    try {
      const plan = raw.prepare(`explain query plan ${IDEMPOTENCY_LOOKUP_SQL}`).all(1n, 'c', 1, 'u', 'n') as { detail: string }[];
      expect(plan.map((p) => p.detail).join('\n')).toMatch(/USING INDEX messages_by_idem_hash \(idem_hash=\?\)/);
    } finally {
      raw.close();
    }
    expect(inspect(dir).indexes).toEqual(['messages_by_id', 'messages_by_idem_hash', 'sqlite_autoindex_messages_1']);
  });

  it(
    'a store written with the earlier schema migrates: hashes filled, earlier sends found again, store check ok',
    { timeout: 30_000 },
    async () => {
      const dir = tempDir();
      // The schema before 0005, filled as the earlier writer did (no idem_hash column yet).
      const raw = new SqliteDatabase(join(dir, STORE_FILE));
      raw.pragma('journal_mode = WAL');
      const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: raw }) });
      const to = await new Migrator({ db, provider: migrationProvider('sqlite') }).migrateTo('0004_cluster');
      expect(to.error).toBeUndefined();
      const old = new SqliteDatabase(join(dir, STORE_FILE));
      expect((old.prepare("select name from sqlite_master where name = 'messages_by_client_msg_no'").all() as unknown[]).length).toBe(1);
      const insert = old.prepare(
        `insert into messages (channel_id, channel_type, message_seq, message_id, client_msg_no, from_uid, setting, flags, expire, topic, created_at, payload)
       values (?, 1, ?, ?, ?, ?, 0, 0, 0, '', 0, ?)`,
      );
      // More rows than one fill statement takes (500), some without a client_msg_no.
      old.transaction(() => {
        for (let seq = 1; seq <= 1234; seq++) {
          insert.run(
            `ch${seq % 7}`,
            seq,
            (1n << 62n) + BigInt(seq),
            seq % 10 === 0 ? '' : `old-${seq}`,
            `u${seq % 3}`,
            Buffer.from([seq & 0xff]),
          );
        }
      })();
      old.close();
      await db.destroy();

      const store = await openEmbeddedStore({ dataDir: dir, sync: 'normal' });
      try {
        expect(inspect(dir)).toEqual({
          indexes: ['messages_by_id', 'messages_by_idem_hash', 'sqlite_autoindex_messages_1'],
          missing: 0,
          extra: 0,
        });
        // Earlier sends are found by the main connection's look-up...
        const hits = await store.messages.findByIdempotencyKeys([
          key('ch1', 'u1', 'old-1'),
          key('ch4', 'u2', 'old-1229'),
          key('ch1', 'u2', 'old-1'),
        ]);
        expect(hits.map((h) => [h.channelId, h.fromUid, h.clientMsgNo, h.messageSeq, h.messageId])).toEqual([
          ['ch1', 'u1', 'old-1', 1, (1n << 62n) + 1n],
          ['ch4', 'u2', 'old-1229', 1229, (1n << 62n) + 1229n],
        ]);
        // ...and by the writer thread's, which then writes nothing.
        const again = await store.messages.appendChecked!([message('ch4', 2000, { fromUid: 'u2', clientMsgNo: 'old-1229' })], []);
        expect(again.map((h) => h.messageSeq)).toEqual([1229]);
        expect(await store.messages.bySeqs('ch4', 1, [2000])).toEqual([]);
        // New sends go in with their hash and are found as well.
        expect(await store.messages.appendChecked!([message('ch5', 2000, { fromUid: 'u2', clientMsgNo: 'new-1' })], [])).toEqual([]);
        expect((await store.messages.findByIdempotencyKeys([key('ch5', 'u2', 'new-1')])).map((h) => h.messageSeq)).toEqual([2000]);
      } finally {
        await store.close();
      }
      expect(inspect(dir)).toMatchObject({ missing: 0, extra: 0 });
      expect(checkStoreFile(dir)).toMatchObject({ ok: true, problems: [] });
      // The migration is recorded: opening again changes nothing.
      const reopened = await openEmbeddedStore({ dataDir: dir, sync: 'normal' });
      await reopened.close();
    },
  );

  it('an interrupted migration runs again from the start (it is one transaction, every step repeatable)', async () => {
    const dir = tempDir();
    const raw = new SqliteDatabase(join(dir, STORE_FILE));
    const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: raw }) });
    await new Migrator({ db, provider: migrationProvider('sqlite') }).migrateTo('0004_cluster');
    raw
      .prepare(
        `insert into messages (channel_id, channel_type, message_seq, message_id, client_msg_no, from_uid, setting, flags, expire, topic, created_at, payload)
         values ('c', 1, 1, 1, 'n', 'u', 0, 0, 0, '', 0, x'00')`,
      )
      .run();
    // As if a process had added the column and some hashes, then died before the migration was recorded.
    raw.exec('alter table messages add column idem_hash integer');
    await db.destroy();
    const store = await openEmbeddedStore({ dataDir: dir, sync: 'normal' });
    try {
      expect(inspect(dir)).toMatchObject({ missing: 0, extra: 0 });
      expect((await store.messages.findByIdempotencyKeys([key('c', 'u', 'n')])).map((h) => h.messageSeq)).toEqual([1]);
    } finally {
      await store.close();
    }
  });

  it('a row with the same hash but another key is never a hit (forced collision)', async () => {
    const dir = tempDir();
    const store = await openEmbeddedStore({ dataDir: dir, sync: 'normal' });
    try {
      await store.messages.appendBatch([message('g', 1, { clientMsgNo: 'a' })], []);
      // Crafted rows carrying the hash of other keys: (g, alice, 'a') — stored — and (g, alice, 'z') — not stored.
      const other = new SqliteDatabase(join(dir, STORE_FILE));
      const craft = other.prepare(
        `insert into messages (channel_id, channel_type, message_seq, message_id, client_msg_no, from_uid, setting, flags, expire, topic, created_at, payload, idem_hash)
         values (?, 1, ?, ?, ?, ?, 0, 0, 0, '', 0, x'00', ?)`,
      );
      craft.run('g', 2, 2n, 'b', 'alice', idemHash('g', 1, 'alice', 'a'));
      craft.run('g', 3, 3n, 'z', 'bob', idemHash('g', 1, 'alice', 'z'));
      craft.run('h', 4, 4n, 'z', 'alice', idemHash('g', 1, 'alice', 'z'));
      other.close();

      // Only the row whose four columns match is a hit, on the main connection...
      expect((await store.messages.findByIdempotencyKeys([key('g', 'alice', 'a')])).map((h) => h.messageSeq)).toEqual([1]);
      expect(await store.messages.findByIdempotencyKeys([key('g', 'alice', 'z')])).toEqual([]);
      // ...and in the writer thread, which commits the send with the colliding key.
      const checked = store.messages.appendChecked!;
      expect((await checked([message('g', 5, { clientMsgNo: 'a' })], [])).map((h) => h.messageSeq)).toEqual([1]);
      expect(await checked([message('g', 5, { clientMsgNo: 'z' })], [])).toEqual([]);
      expect((await store.messages.findByIdempotencyKeys([key('g', 'alice', 'z')])).map((h) => h.messageSeq)).toEqual([5]);
    } finally {
      await store.close();
    }
  });

  it('every other SQLite insert path fills the hash: the repositories over kysely, the memory store, import', async () => {
    // The repositories' own append (the fenced path) and their generic look-up.
    const dir = tempDir();
    const db = await openSqlite({ dataDir: dir, sync: 'normal' });
    const repos = createRepositories(db);
    await repos.messages.appendBatch([message('r', 1), message('r', 2, { clientMsgNo: '' })], []);
    expect(
      (await repos.messages.findByIdempotencyKeys([key('r', 'alice', 'cmn-1'), key('r', 'bob', 'cmn-1')])).map((h) => h.messageSeq),
    ).toEqual([1]);
    await db.destroy();
    expect(inspect(dir)).toMatchObject({ missing: 0, extra: 0 });

    const memory = await openMemoryStore();
    await memory.messages.appendBatch([message('m', 1)], []);
    expect((await memory.messages.findByIdempotencyKeys([key('m', 'alice', 'cmn-1')])).map((h) => h.messageSeq)).toEqual([1]);
    await memory.close();

    // `parleyctl migrate import` writes through the import repository.
    const importDir = tempDir();
    const target = await openImportTarget(importDir);
    await target.transaction((rows) =>
      rows.messages([
        { ...messageRow(message('i', 1)), client_msg_no: 'x' },
        { ...messageRow(message('i', 2)), client_msg_no: '' },
      ]),
    );
    await target.close();
    expect(inspect(importDir)).toMatchObject({ missing: 0, extra: 0 });
    const reader = await openEmbeddedStore({ dataDir: importDir, sync: 'normal' });
    try {
      expect((await reader.messages.findByIdempotencyKeys([key('i', 'alice', 'x')])).map((h) => h.messageSeq)).toEqual([1]);
    } finally {
      await reader.close();
    }
  });
});

describe('PostgreSQL keeps its schema', () => {
  it.skipIf(!pgUp)('no idem_hash column, the four-column index, no 0005 migration; its look-up still finds a send', async () => {
    const s = createTestSchema('parley_idem');
    const store = await openPostgresStore({ url: s.url, poolSize: 1 });
    const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await client.connect();
    try {
      await store.messages.appendBatch([message('p', 1)], []);
      expect((await store.messages.findByIdempotencyKeys([key('p', 'alice', 'cmn-1')])).map((h) => h.messageSeq)).toEqual([1]);
      const columns = await client.query(
        "select column_name from information_schema.columns where table_schema = $1 and table_name = 'messages' and column_name = 'idem_hash'",
        [s.schema],
      );
      expect(columns.rows).toEqual([]);
      const indexes = await client.query("select indexname from pg_indexes where schemaname = $1 and tablename = 'messages' order by 1", [
        s.schema,
      ]);
      expect(indexes.rows.map((r: { indexname: string }) => r.indexname)).toContain('messages_by_client_msg_no');
      expect(indexes.rows.map((r: { indexname: string }) => r.indexname)).not.toContain('messages_by_idem_hash');
      const applied = await client.query(`select name from "${s.schema}".kysely_migration order by name`);
      expect(applied.rows.map((r: { name: string }) => r.name)).toEqual([
        '0001_core',
        '0002_conversation_unread',
        '0003_cmd_bindings_and_events',
        '0004_cluster',
      ]);
    } finally {
      await client.end();
      await store.close();
      await s.drop();
    }
  });
});
