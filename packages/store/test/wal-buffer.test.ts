import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { loadWalBuffer, openEmbeddedStore, resolveWalBuffer, STORE_FILE, walBufferStats } from '../src/index.ts';
import { seqMessage } from './support/seq-message.ts';
import { spawnTsChild } from './support/ts-child.ts';

/**
 * The WAL buffer (`@parley/sqlite-walbuf`, `sqlite/wal-buffer.ts`): a commit's WAL frames
 * gathered and written in pieces of at most 120 KiB just before its fsync. What it must keep:
 * the files hold exactly what SQLite's own writes give (the same rows, an intact database, a
 * WAL another connection reads), whatever the transaction does (spills, rewritten frames,
 * commits larger than a piece), frames a commit publishes are in the file before anyone can
 * read them even without a sync, and an acknowledged batch survives kill -9. Real files,
 * real threads, a real child process.
 */

const CHILD = join(import.meta.dirname, 'support', 'append-loop-child.ts');
const dirs: string[] = [];
const newDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'parley-walbuf-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const loaded = loadWalBuffer();
// CI builds the extension (`npm ci`): there a missing one is a failure, not a skip.
if (process.env.CI === 'true') expect(loaded, loaded.ok ? '' : loaded.reason).toEqual({ ok: true });
const built = loaded.ok;

describe('resolveWalBuffer', () => {
  const ok = () => ({ ok: true }) as const;
  const missing = () => ({ ok: false, reason: 'not built' }) as const;
  it('off never, auto when loaded and sync = full, on the same or refused with the reason', () => {
    expect(resolveWalBuffer('off', 'full', ok).on).toBe(false);
    expect(resolveWalBuffer('auto', 'full', ok)).toEqual({ on: true, reason: 'extension loaded' });
    expect(resolveWalBuffer('auto', 'full', missing)).toEqual({ on: false, reason: 'not built' });
    expect(resolveWalBuffer('auto', 'normal', ok)).toEqual({ on: false, reason: 'store.sync = normal' });
    expect(resolveWalBuffer('on', 'full', ok).on).toBe(true);
    expect(() => resolveWalBuffer('on', 'full', missing)).toThrow(/sqlite_wal_buffer = on, but the WAL buffer is unavailable: not built/);
    expect(() => resolveWalBuffer('on', 'normal', ok)).toThrow(/needs store.sync = full/);
  });
});

/** A connection on this thread with the buffer as `on` says (the pragma is per thread: set on every use). */
function connect(file: string, sync: 'FULL' | 'NORMAL') {
  const db = new SqliteDatabase(file);
  db.pragma('page_size = 1024');
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${sync}`);
  db.pragma('wal_autocheckpoint = 0');
  return db;
}

/**
 * A workload with every kind of WAL write: small commits, a commit of ~6 MB (many 120 KiB
 * pieces, more than the 8 MiB gathering limit once with its index pages), and a transaction
 * under a 20-page cache that spills pages to the WAL before its commit and changes them again
 * (SQLite then rewrites frames it already wrote and reads them back to redo checksums).
 */
function workload(db: SqliteDatabase.Database): void {
  db.exec('create table t (k integer primary key, v blob, w text)');
  db.exec('create index t_by_w on t (w)');
  const ins = db.prepare('insert into t (k, v, w) values (?, ?, ?)');
  const upd = db.prepare('update t set v = ?, w = ? where k = ?');
  for (let c = 0; c < 40; c++)
    db.transaction(() => {
      for (let i = 0; i < 25; i++) ins.run(c * 25 + i, Buffer.alloc(90, c), `w${(c * 7919 + i * 104_729) % 10_007}`);
    })();
  db.transaction(() => {
    for (let i = 0; i < 3000; i++) ins.run(10_000 + i, Buffer.alloc(2000, i & 0xff), `big${(i * 7919) % 3001}`);
  })();
  db.pragma('cache_size = 20');
  db.transaction(() => {
    for (let round = 0; round < 3; round++) {
      for (let k = 0; k < 1000; k += 3) upd.run(Buffer.alloc(120, round + k), `r${round}-${(k * 31) % 997}`, k);
    }
  })();
  db.pragma('cache_size = -2000');
}

const rowsOf = (db: SqliteDatabase.Database) => db.prepare('select k, hex(v) as v, w from t order by k').all();

describe.skipIf(!built)('the WAL buffer on one thread (raw connections)', () => {
  it('writes what SQLite writes itself, in far fewer writes, readable by another connection before any checkpoint', () => {
    const dir = newDir();
    const plain = connect(join(dir, 'plain.db'), 'FULL');
    expect(plain.pragma('parley_wal_buffer', { simple: true })).toBe('off');
    workload(plain);
    const before = walBufferStats(plain)!;
    expect(before).toBeDefined();
    const buffered = connect(join(dir, 'buffered.db'), 'FULL');
    try {
      expect(buffered.pragma('parley_wal_buffer = on', { simple: true })).toBe('on');
      workload(buffered);
    } finally {
      buffered.pragma('parley_wal_buffer = off');
    }
    const after = walBufferStats(buffered)!;
    const gathered = after.gathered - before.gathered;
    const writes = after.flushes - before.flushes;
    // Two writes per frame gathered; the 6 MB commit alone is over 5,000 frames.
    expect(gathered).toBeGreaterThan(10_000);
    expect(writes).toBeGreaterThan(40);
    // The spilling transaction rewrites frames out of order (each such write starts a new piece).
    expect(writes).toBeLessThan(gathered / 10);
    // Every piece at most 120 KiB: the bytes need at least this many writes.
    expect(writes).toBeGreaterThanOrEqual(Math.ceil((after.bytes - before.bytes) / (120 * 1024)));
    // Another connection reads the WAL the buffered one wrote (nothing checkpointed yet).
    const reader = new SqliteDatabase(join(dir, 'buffered.db'), { readonly: true });
    expect(rowsOf(reader)).toEqual(rowsOf(plain));
    expect(reader.pragma('integrity_check', { simple: true })).toBe('ok');
    reader.close();
    // And the database the checkpoint makes of it is the same as well.
    expect(buffered.pragma('wal_checkpoint(TRUNCATE)')).toEqual([{ busy: 0, log: 0, checkpointed: 0 }]);
    expect(rowsOf(buffered)).toEqual(rowsOf(plain));
    expect(buffered.pragma('integrity_check', { simple: true })).toBe('ok');
    // Off again: this thread's writes are SQLite's own.
    const idle = walBufferStats(plain)!;
    plain.prepare('insert into t (k, v, w) values (?, ?, ?)').run(99_999, Buffer.alloc(10), 'z');
    expect(walBufferStats(plain)).toEqual(idle);
    plain.close();
    buffered.close();
  });

  it('without a sync (synchronous = NORMAL) a commit is in the file before it is visible', () => {
    const dir = newDir();
    const file = join(dir, 'normal.db');
    const writer = connect(file, 'NORMAL');
    writer.exec('create table t (k integer primary key, v blob, w text)');
    const reader = new SqliteDatabase(file, { readonly: true });
    const ins = writer.prepare('insert into t (k, v, w) values (?, ?, ?)');
    const count = reader.prepare('select count(*) as n, sum(length(v)) as bytes from t');
    try {
      writer.pragma('parley_wal_buffer = on');
      const start = walBufferStats(writer)!;
      for (let c = 1; c <= 60; c++) {
        writer.transaction(() => {
          for (let i = 0; i < 20; i++) ins.run(c * 100 + i, Buffer.alloc(500 + c, c), `c${c}`);
        })();
        // No sync flushed these frames: SQLite's WAL index barrier did, before the new header.
        expect(count.get()).toEqual({ n: c * 20, bytes: 20 * (500 * c + (c * (c + 1)) / 2) });
      }
      expect(walBufferStats(writer)!.gathered - start.gathered).toBeGreaterThan(60 * 20);
    } finally {
      writer.pragma('parley_wal_buffer = off');
    }
    expect(reader.pragma('integrity_check', { simple: true })).toBe('ok');
    reader.close();
    writer.close();
  });

  it('refuses a value it does not know, and leaves other pragmas to SQLite', () => {
    const db = connect(join(newDir(), 'p.db'), 'FULL');
    expect(() => db.pragma('parley_wal_buffer = maybe')).toThrow(/parley_wal_buffer takes on or off/);
    expect(() => db.pragma('parley_wal_buffer_stats = 1')).toThrow(/takes no value/);
    expect(db.pragma('parley_wal_buffer', { simple: true })).toBe('off');
    expect(db.pragma('page_size', { simple: true })).toBe(1024);
    db.close();
  });
});

const message = (seq: number, bytes: number) => seqMessage(seq, bytes, 5);

describe.skipIf(!built)('the embedded store with the WAL buffer', () => {
  it('on: the writer thread gathers its commits, every batch reads back whole; off: SQLite writes alone', async () => {
    for (const mode of ['on', 'off'] as const) {
      const dir = newDir();
      const store = await openEmbeddedStore({ dataDir: dir, sync: 'full', walBuffer: mode });
      expect(store.walBuffer?.on).toBe(mode === 'on');
      // Any file connection answers the process's counts (an in-memory one has no VFS file).
      const probe = new SqliteDatabase(join(dir, 'probe.db'));
      const start = walBufferStats(probe)!;
      let seq = 0;
      // 512 messages of 3 KiB: one commit of ~2 MB, many pieces; then small batches.
      await store.messages.appendBatch(
        Array.from({ length: 512 }, () => message(++seq, 3072)),
        [],
      );
      for (let b = 0; b < 20; b++) await store.messages.appendBatch([message(++seq, 64), message(++seq, 64)], []);
      const stats = walBufferStats(probe)!;
      probe.close();
      if (mode === 'on') {
        expect(stats.gathered - start.gathered).toBeGreaterThan(2 * 1500);
        expect(stats.flushes - start.flushes).toBeLessThan((stats.gathered - start.gathered) / 10);
      } else {
        expect(stats.gathered).toBe(start.gathered);
      }
      await store.close();
      const db = new SqliteDatabase(join(dir, STORE_FILE), { readonly: true });
      const rows = db.prepare('select message_seq as seq, length(payload) as bytes from messages order by message_seq').all();
      expect(rows).toEqual(Array.from({ length: seq }, (_, i) => ({ seq: i + 1, bytes: i < 512 ? 3072 : 64 })));
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      db.close();
    }
  });

  it('refuses on with sync = normal before opening anything', async () => {
    await expect(openEmbeddedStore({ dataDir: newDir(), sync: 'normal', walBuffer: 'on' })).rejects.toThrow(/needs store.sync = full/);
  });

  it('every batch acknowledged before kill -9 is in the store after it', async () => {
    const dir = newDir();
    const child = spawnTsChild(CHILD, [dir, 'on']);
    try {
      // Killed in full flight: many batches in, both sizes acknowledged.
      await expect
        .poll(() => (child.out().match(/acked/g) ?? []).length + (child.err() === '' ? 0 : 1e9), { timeout: 30_000, interval: 20 })
        .toBeGreaterThan(40);
    } finally {
      child.kill();
    }
    expect(child.err()).toBe('');
    expect(await child.exited).toBe('SIGKILL');
    const acked = Math.max(...[...child.out().matchAll(/acked (\d+)/g)].map((m) => Number(m[1])));
    expect(acked).toBeGreaterThan(3000);
    const db = new SqliteDatabase(join(dir, STORE_FILE));
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    const { n, top } = db.prepare('select count(*) as n, max(message_seq) as top from messages').get() as { n: number; top: number };
    // Every acknowledged message, numbered without a gap; at most the batch in flight beyond.
    expect(top).toBeGreaterThanOrEqual(acked);
    expect(n).toBe(top);
    const bad = db
      .prepare(
        "select count(*) as n from messages where length(payload) not in (40, 2048) or hex(substr(payload, 1, 1)) <> printf('%02X', message_seq % 256)",
      )
      .get() as { n: number };
    expect(bad.n).toBe(0);
    db.close();
  }, 60_000);
});
