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

/**
 * Creates Parley's tables in the schema the URL names, for a bulk import: the
 * schema must not exist yet or be empty (an import never writes into a store
 * that holds anything). `seal()` only fingerprints: there is no file to fold.
 */
export async function openPostgresImportTarget(url: string): Promise<ImportTarget> {
  const location = parsePostgresUrl(url);
  const existing = await tablesIn(url, location.schema);
  if (existing.length > 0) {
    throw new StoreIntegrityError(storeLabel(location), [
      `the target schema is not empty (${existing.length} tables: ${existing.slice(0, 5).join(', ')}${existing.length > 5 ? ', …' : ''}); ` +
        'an import writes into a new or empty schema only',
    ]);
  }
  const { db } = await openPostgres({ url, poolSize: 2, sync: 'full' });
  return {
    transaction: (work) => db.transaction().execute((trx) => work(createImportRepository(trx))),
    contentDigest: () => contentDigest(db),
    async seal() {
      // Planner statistics for the freshly filled tables (only Parley's: the database may hold others).
      await sql`analyze ${sql.join(CONTENT_TABLES.map((t) => sql.table(t.table)))}`.execute(db);
      return contentDigest(db);
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
