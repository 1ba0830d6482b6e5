import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect } from 'kysely';
import { hasSchema, integrityProblems, StoreIntegrityError, STORE_FILE } from './integrity.ts';
import { migrationProvider } from './migrations.ts';
import { observedDialect } from './observed-dialect.ts';
import type { WriteHealth } from './write-health.ts';
import type { Database } from './schema.ts';

export type Db = Kysely<Database>;

export interface OpenOptions {
  dataDir: string;
  /** SQLite synchronous mode: `full` fsyncs each commit. */
  sync: 'full' | 'normal';
  /**
   * The directory says it holds a store (`integrity.ts` `storeMarker`): open
   * only an existing database that has Parley's schema, never create one.
   */
  mustExist?: boolean;
  /** Told of every storage failure and, while failing, of writes that succeed again. */
  health?: WriteHealth;
}

/** How long a statement waits for another connection's lock before failing with SQLITE_BUSY, ms. */
export const BUSY_TIMEOUT_MS = 5000;

/** Prepared statements kept per connection, by SQL text. */
const STATEMENT_CACHE_SIZE = 512;

/**
 * What kysely's `rollback` runs when SQLite has already rolled the
 * transaction back itself (it does after disk-full and I/O errors): nothing.
 * Running the real statement would fail with "cannot rollback - no
 * transaction is active", and that error would replace the real cause.
 */
const NO_ROLLBACK = { reader: false, run: () => ({ changes: 0, lastInsertRowid: 0 }) } as unknown as SqliteDatabase.Statement;

/**
 * better-sqlite3 behind kysely, with prepared statements reused by SQL text
 * (kysely asks for a fresh one on every query, which the send path's profile
 * showed at 15% of its time). Safe because better-sqlite3 runs a statement
 * synchronously and kysely's connection mutex never runs two queries at once.
 */
function withStatementCache(raw: SqliteDatabase.Database) {
  const cache = new Map<string, SqliteDatabase.Statement>();
  return {
    close: () => raw.close(),
    prepare(sql: string): SqliteDatabase.Statement {
      if (sql === 'rollback' && !raw.inTransaction) return NO_ROLLBACK;
      let stmt = cache.get(sql);
      if (stmt) {
        cache.delete(sql);
      } else {
        stmt = raw.prepare(sql);
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
      }
      cache.set(sql, stmt);
      return stmt;
    },
  };
}

/**
 * Opens the file and checks it before anything is written: it must be an
 * SQLite database (with Parley's schema when `mustExist`) that passes
 * `PRAGMA quick_check`. Every failure is a `StoreIntegrityError` naming the path.
 */
function openChecked(file: string, options: OpenOptions): SqliteDatabase.Database {
  let raw: SqliteDatabase.Database | undefined;
  try {
    raw = new SqliteDatabase(file, { fileMustExist: options.mustExist === true });
    raw.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    raw.pragma('journal_mode = WAL');
    raw.pragma(`synchronous = ${options.sync === 'full' ? 'FULL' : 'NORMAL'}`);
    if (options.mustExist && !hasSchema(raw)) {
      throw new StoreIntegrityError(file, [
        'the database holds no Parley tables, but the data directory says it holds a store; restore it from a backup',
      ]);
    }
    const damage = integrityProblems(raw, false, 10);
    if (damage.length > 0) {
      throw new StoreIntegrityError(file, [`PRAGMA quick_check found damage (run \`parley store check\` for the full report):`, ...damage]);
    }
    return raw;
  } catch (err) {
    raw?.close();
    if (err instanceof StoreIntegrityError) throw err;
    const e = err as Error & { code?: string };
    throw new StoreIntegrityError(file, [`${e.code ? `${e.code}: ` : ''}${e.message}`]);
  }
}

/** Opens (creating if needed, unless `mustExist`) `<dataDir>/parley.db` in WAL mode and applies pending migrations. */
export async function openSqlite(options: OpenOptions): Promise<Db> {
  mkdirSync(options.dataDir, { recursive: true });
  const file = join(options.dataDir, STORE_FILE);
  const raw = openChecked(file, options);
  const sqlite = new SqliteDialect({ database: withStatementCache(raw) });
  const dialect = options.health ? observedDialect(sqlite, options.health, () => raw.inTransaction) : sqlite;
  const db = new Kysely<Database>({ dialect });
  const { error, results } = await new Migrator({ db, provider: migrationProvider('sqlite') }).migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    await db.destroy();
    throw new StoreIntegrityError(file, [`migration failed${failed ? ` at ${failed.migrationName}` : ''}: ${String(error)}`]);
  }
  return db;
}
