import { sql } from 'kysely';
import { contentDigest } from '../content-digest.ts';
import { createRepositories } from '../repositories/index.ts';
import { createImportRepository } from '../repositories/import.repository.ts';
import { createSnapshotRepository } from '../repositories/snapshot.repository.ts';
import { StoreIntegrityError } from '../sqlite/integrity.ts';
import type { ImportTarget, StoreReader } from '../sqlite/migration-target.ts';
import { DEFAULT_POOL_SIZE, openPostgres, postgresDialect, storeLabel } from './open.ts';
import { parsePostgresUrl } from './url.ts';
import { Kysely } from 'kysely';
import type { Database } from '../schema.ts';
import { CONTENT_TABLES } from '../tables.ts';

/** Tables in a schema, by name. */
async function tablesIn(url: string, schema: string): Promise<string[]> {
  const location = parsePostgresUrl(url);
  const db = new Kysely<Database>({ dialect: postgresDialect(location, { poolSize: 1 }) });
  try {
    const { rows } = await sql<{ table_name: string }>`select table_name from information_schema.tables
      where table_schema = ${schema} order by table_name`.execute(db);
    return rows.map((r) => r.table_name);
  } finally {
    await db.destroy();
  }
}

/** `meta` keys of an import into PostgreSQL: written first (removed by `finish`), and the finished import's record. */
const PARTIAL_KEY = 'import_partial';
const FINISHED_KEY = 'import_finished';

/** What a schema holds, as an import sees it. */
export interface PostgresImportMarks {
  /** Every table in the schema (empty: nothing there, or no schema). */
  tables: string[];
  /** The mark of an import that started and did not finish. */
  partial?: string;
  /** The record a finished import left (`finish`). */
  finished?: string;
}

/** Reads what a schema holds before an import: its tables and the import marks in `meta`. */
export async function readPostgresImportMarks(url: string): Promise<PostgresImportMarks> {
  const location = parsePostgresUrl(url);
  const db = new Kysely<Database>({ dialect: postgresDialect(location, { poolSize: 1 }) });
  try {
    const { rows } = await sql<{ table_name: string }>`select table_name from information_schema.tables
      where table_schema = ${location.schema} order by table_name`.execute(db);
    const tables = rows.map((r) => r.table_name);
    const marks: PostgresImportMarks = { tables };
    if (tables.includes('meta')) {
      const meta = await sql<{ key: string; value: string }>`select key, value from ${sql.table(`${location.schema}.meta`)}
        where key in (${PARTIAL_KEY}, ${FINISHED_KEY})`.execute(db);
      for (const r of meta.rows) {
        if (r.key === PARTIAL_KEY) marks.partial = r.value;
        else marks.finished = r.value;
      }
    }
    return marks;
  } finally {
    await db.destroy();
  }
}

/** An import into a PostgreSQL schema: the SQLite target's operations, and the record that ends it. */
export interface PostgresImportTarget extends ImportTarget {
  /** Ends the import in one transaction: the partial mark goes, `record` stays (`readPostgresImportMarks().finished`). */
  finish(record: string): Promise<void>;
}

/**
 * Creates Parley's tables in the schema the URL names, for a bulk import, and
 * marks it `partial` (committed before any row). The schema must not exist yet
 * or be empty — except that `discard`, when it equals the partial mark an
 * interrupted import of the same identity left, drops that schema with
 * everything in it first. `seal()` only fingerprints: there is no file to fold.
 */
export async function openPostgresImportTarget(url: string, partial: string, discard?: string): Promise<PostgresImportTarget> {
  const location = parsePostgresUrl(url);
  const label = storeLabel(location);
  const marks = await readPostgresImportMarks(url);
  if (marks.tables.length > 0) {
    if (discard === undefined || marks.partial !== discard || marks.finished !== undefined) {
      const t = marks.tables;
      throw new StoreIntegrityError(label, [
        `the target schema is not empty (${t.length} tables: ${t.slice(0, 5).join(', ')}${t.length > 5 ? ', …' : ''}); ` +
          'an import writes into a new or empty schema only',
      ]);
    }
    const admin = new Kysely<Database>({ dialect: postgresDialect(location, { poolSize: 1 }) });
    try {
      await sql.raw(`drop schema "${location.schema}" cascade`).execute(admin);
    } finally {
      await admin.destroy();
    }
  }
  const { db } = await openPostgres({ url, poolSize: 2, sync: 'full' });
  try {
    await sql`insert into meta (key, value) values (${PARTIAL_KEY}, ${partial})`.execute(db);
  } catch (err) {
    await db.destroy();
    throw err;
  }
  return {
    transaction: (work) => db.transaction().execute((trx) => work(createImportRepository(trx, 'postgres'))),
    contentDigest: () => contentDigest(db),
    async seal() {
      // Planner statistics for the freshly filled tables (only Parley's: the database may hold others).
      await sql`analyze ${sql.join(CONTENT_TABLES.map((t) => sql.table(t.table)))}`.execute(db);
      return contentDigest(db);
    },
    async finish(record) {
      await db.transaction().execute(async (trx) => {
        await sql`delete from meta where key = ${PARTIAL_KEY}`.execute(trx);
        await sql`insert into meta (key, value) values (${FINISHED_KEY}, ${record})`.execute(trx);
      });
    },
    close: () => db.destroy(),
  };
}

/** Whether the schema the URL names holds Parley's tables (an import finished or started there). */
export async function postgresSchemaTables(url: string): Promise<string[]> {
  return tablesIn(url, parsePostgresUrl(url).schema);
}

/** Opens the schema the URL names read-only; it must hold Parley's tables with the current migrations. */
export async function openPostgresStoreReader(url: string): Promise<StoreReader> {
  const { db } = await openPostgres({ url, poolSize: Math.min(4, DEFAULT_POOL_SIZE), readOnly: true });
  return {
    snapshot: createSnapshotRepository(db),
    repositories: createRepositories(db, 'postgres'),
    contentDigest: () => contentDigest(db),
    close: () => db.destroy(),
  };
}
