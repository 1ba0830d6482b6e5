import type pg from 'pg';
import { CompiledQuery, Kysely, Migrator, PostgresDialect, sql, type Dialect as KyselyDialect } from 'kysely';
import type { Db } from '../db.ts';
import { migrationProvider } from '../migrations.ts';
import type { Database } from '../schema.ts';
import { StoreIntegrityError } from '../sqlite/integrity.ts';
import { observedDialect } from '../sqlite/observed-dialect.ts';
import type { WriteHealth } from '../sqlite/write-health.ts';
import { parsePostgresUrl, type PostgresLocation } from './url.ts';

export interface PostgresOpenOptions {
  /** `store.postgres_url` (`url.ts`). */
  url: string;
  /** Most connections the pool opens. */
  poolSize?: number;
  /** `full`: every commit waits for the server's WAL flush; `normal`: `synchronous_commit = off` (survives a Parley crash, not a database server crash). */
  sync?: 'full' | 'normal';
  /** The node's data directory says it holds a store: the schema must already hold Parley's tables. */
  mustExist?: boolean;
  /** Read only (every transaction read-only, no schema changes); the schema must exist with the current migrations. */
  readOnly?: boolean;
  /** Told of every storage failure (and of the pool losing an idle connection). */
  health?: WriteHealth;
}

/** Default connections per pool: enough for group commit plus reads, small enough for three nodes and tests on one server. */
export const DEFAULT_POOL_SIZE = 10;

/** Longest wait for a connection from the server or the pool, ms. */
const CONNECT_TIMEOUT_MS = 10_000;

/** PostgreSQL's bigint (int8) type OID. */
const INT8_OID = 20;

/**
 * bigint columns as numbers when they fit exactly (sequences, times, counts),
 * as bigint otherwise — never a rounded number. Message ids are read as text
 * in any case (`cast(message_id as text)`).
 */
function parseInt8(text: string): number | bigint {
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : BigInt(text);
}

/** Parley's type parsers over pg's: int8 as above, every other type as pg parses it. */
function typesOver(types: typeof pg.types) {
  return {
    getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
      oid === INT8_OID && format !== 'binary' ? parseInt8 : types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
  };
}

/** How a store is named in errors: the URL without password, and the schema. */
export function storeLabel(location: PostgresLocation): string {
  return `${location.display} (schema ${location.schema})`;
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

async function hasParleySchema(db: Db, schema: string): Promise<boolean> {
  const { rows } = await sql<{ n: number }>`select count(*) as n from information_schema.tables
    where table_schema = ${schema} and table_name = 'kysely_migration'`.execute(db);
  return Number(rows[0]?.n ?? 0) > 0;
}

/** Creates the schema; two nodes starting at once may race on it, so a lost race is fine. */
async function createSchema(db: Db, schema: string): Promise<void> {
  try {
    await sql.raw(`create schema if not exists ${quoteIdent(schema)}`).execute(db);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code !== '23505' && code !== '42P06') throw err;
  }
}

async function migrate(db: Db, location: PostgresLocation, readOnly: boolean): Promise<void> {
  const label = storeLabel(location);
  const migrator = new Migrator({ db, provider: migrationProvider('postgres'), migrationTableSchema: location.schema });
  if (readOnly) {
    const pending = (await migrator.getMigrations()).filter((m) => m.executedAt === undefined);
    if (pending.length > 0)
      throw new StoreIntegrityError(label, [
        `the schema is older than this tool (${pending.length} migrations pending); start a node on it once`,
      ]);
    return;
  }
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    throw new StoreIntegrityError(label, [`migration failed${failed ? ` at ${failed.migrationName}` : ''}: ${String(error)}`]);
  }
}

/** A pool over the URL, its connections set up for Parley (read-only, commit mode). */
export function postgresDialect(location: PostgresLocation, options: Omit<PostgresOpenOptions, 'url'>): KyselyDialect {
  // `pg` is loaded when the pool is first used, not when the store package is: an
  // embedded (SQLite) node never loads it (a few MiB of heap and code it would keep).
  const pool = async (): Promise<pg.Pool> => {
    const { default: pgModule } = await import('pg');
    const created = new pgModule.Pool({
      connectionString: location.url,
      max: options.poolSize ?? DEFAULT_POOL_SIZE,
      types: typesOver(pgModule.types),
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      application_name: 'parley',
    });
    // An idle connection the server dropped: without a listener this would end the process.
    created.on('error', (err) => options.health?.failed(err));
    return created;
  };
  const settings: string[] = [];
  if (options.readOnly) settings.push('set default_transaction_read_only = on');
  if (options.sync === 'normal') settings.push('set synchronous_commit = off');
  const dialect = new PostgresDialect({
    pool,
    onCreateConnection: async (c) => {
      for (const s of settings) await c.executeQuery(CompiledQuery.raw(s));
    },
  });
  return options.health ? observedDialect(dialect, options.health, () => false) : dialect;
}

/**
 * Opens the PostgreSQL store the URL names: creates its schema when missing
 * (unless `mustExist` or `readOnly`), checks that the connection's
 * `search_path` really lands in it, and applies pending migrations (kysely
 * holds an advisory lock meanwhile, so nodes starting together take turns).
 * Every refusal is a `StoreIntegrityError` naming the URL without password.
 */
export async function openPostgres(options: PostgresOpenOptions): Promise<{ db: Db; location: PostgresLocation }> {
  const location = parsePostgresUrl(options.url);
  const label = storeLabel(location);
  const db = new Kysely<Database>({ dialect: postgresDialect(location, options) });
  try {
    const exists = await hasParleySchema(db, location.schema).catch((err: unknown) => {
      const e = err as Error & { code?: string };
      throw new StoreIntegrityError(label, [`cannot connect: ${e.code ? `${e.code}: ` : ''}${e.message}`]);
    });
    if (!exists && (options.mustExist || options.readOnly)) {
      throw new StoreIntegrityError(label, [
        options.readOnly
          ? 'the schema holds no Parley tables'
          : 'the schema holds no Parley tables, but the data directory says it holds a store; restore the schema from a backup or point store.postgres_url at it',
      ]);
    }
    if (!options.readOnly) await createSchema(db, location.schema);
    const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
    if (rows[0]?.schema !== location.schema) {
      throw new StoreIntegrityError(label, [
        `the connection's schema is ${rows[0]?.schema ?? 'none'}, not ${location.schema}: the server did not apply the search_path`,
      ]);
    }
    await migrate(db, location, options.readOnly === true);
  } catch (err) {
    await db.destroy();
    throw err;
  }
  return { db, location };
}
