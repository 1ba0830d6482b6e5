import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { STORE_FILE } from './integrity.ts';
import { openSqlite } from './open.ts';

describe('openSqlite', () => {
  it('keeps the real error of a transaction SQLite already rolled back (disk full, I/O), not "cannot rollback"', async () => {
    const db = await openSqlite({ dataDir: mkdtempSync(join(tmpdir(), 'parley-db-')), sync: 'normal' });
    try {
      const cause = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
      const run = db.transaction().execute(async (trx) => {
        await sql`insert into meta (key, value) values ('k', 'v')`.execute(trx);
        // What SQLite does itself after some disk-full and I/O errors: the transaction is gone.
        await sql.raw('rollback').execute(trx);
        throw cause;
      });
      await expect(run).rejects.toBe(cause);
      expect(await db.selectFrom('meta').selectAll().where('key', '=', 'k').execute()).toEqual([]);
    } finally {
      await db.destroy();
    }
  });

  it("holds the write lock from a transaction's begin, so a commit by another connection cannot refuse its writes", async () => {
    // Begun deferred, a transaction that reads first holds a snapshot, and a commit by another
    // connection (the writer thread) before its first write makes SQLite refuse that write at once
    // with SQLITE_BUSY: no busy wait applies to a stale snapshot. Begun immediate, the other
    // connection waits for (here, with no wait allowed, is refused) the lock instead.
    const dataDir = mkdtempSync(join(tmpdir(), 'parley-db-'));
    const db = await openSqlite({ dataDir, sync: 'normal' });
    const other = new SqliteDatabase(join(dataDir, STORE_FILE));
    other.pragma('busy_timeout = 0');
    try {
      let otherWrite = 'committed';
      await db.transaction().execute(async (trx) => {
        await sql`select count(*) from meta`.execute(trx);
        try {
          other.prepare("insert into meta (key, value) values ('other', 'v')").run();
        } catch (err) {
          otherWrite = (err as { code?: string }).code ?? String(err);
        }
        await sql`insert into meta (key, value) values ('mine', 'v')`.execute(trx);
      });
      expect(otherWrite).toBe('SQLITE_BUSY');
      expect((await db.selectFrom('meta').select('key').where('key', 'in', ['mine', 'other']).execute()).map((r) => r.key)).toEqual([
        'mine',
      ]);
    } finally {
      other.close();
      await db.destroy();
    }
  });
});
