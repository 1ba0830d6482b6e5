import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
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
});
