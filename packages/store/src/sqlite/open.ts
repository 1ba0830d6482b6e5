import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { CompiledQuery, Kysely, Migrator, SqliteDialect, SqliteDriver, type DatabaseConnection, type SqliteDialectConfig } from 'kysely';
import type { Db } from '../db.ts';
import { migrationProvider } from '../migrations.ts';
import type { Database } from '../schema.ts';
import { hasSchema, integrityProblems, StoreIntegrityError, STORE_FILE } from './integrity.ts';
import { observedDialect } from './observed-dialect.ts';
import type { WriteHealth } from './write-health.ts';

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
  /** Read an existing store without changing it (no migrations, no journal change); `sync` is then unused. */
  readOnly?: boolean;
}

/** How long a statement waits for another connection's lock before failing with SQLITE_BUSY, ms. */
export const BUSY_TIMEOUT_MS = 5000;

/**
 * Page size of a new database, bytes. Appending a message dirties a few
 * B-tree pages at random places (the channel's key, its idempotency hash, the
 * sender's membership), and every dirty page is written whole to the WAL and
 * again at the checkpoint: with 1 KiB pages a commit writes a quarter of the
 * bytes, which measured 38% less CPU per appended row than the 4 KiB default
 * (BENCHMARKS.md). Existing databases keep the size they were created with.
 */
const NEW_DATABASE_PAGE_SIZE = 1024;

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
 * kysely's SQLite driver with transactions begun `immediate`: the write lock
 * is taken at `begin`, waiting out the busy timeout like any write. Begun
 * deferred (kysely's default), a transaction that reads before it writes (an
 * event append reads the message's last event seq, then inserts) holds a read
 * snapshot, and a commit by the writer thread in between makes SQLite refuse
 * the upgrade at once with SQLITE_BUSY (no busy wait can help a stale
 * snapshot): the request failed with a 503 while messages were being sent.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  constructor(private readonly sqliteConfig: SqliteDialectConfig) {
    super(sqliteConfig);
  }

  override createDriver(): SqliteDriver {
    return new ImmediateSqliteDriver(this.sqliteConfig);
  }
}

/**
 * Opens the file and checks it before anything is written: it must be an
 * SQLite database (with Parley's schema when `mustExist` or `readOnly`) that
 * passes `PRAGMA quick_check`. Every failure is a `StoreIntegrityError` naming
 * the path.
 */
function openChecked(file: string, options: OpenOptions): SqliteDatabase.Database {
  let raw: SqliteDatabase.Database | undefined;
  try {
    const readonly = options.readOnly === true;
    raw = new SqliteDatabase(file, { fileMustExist: options.mustExist === true || readonly, readonly });
    raw.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    if (!readonly) {
      // Only takes effect on a database with no pages yet, and only before WAL mode is set.
      if (raw.pragma('page_count', { simple: true }) === 0) raw.pragma(`page_size = ${NEW_DATABASE_PAGE_SIZE}`);
      raw.pragma('journal_mode = WAL');
      raw.pragma(`synchronous = ${options.sync === 'full' ? 'FULL' : 'NORMAL'}`);
    }
    if ((options.mustExist || readonly) && !hasSchema(raw)) {
      throw new StoreIntegrityError(file, [
        readonly
          ? 'the database holds no Parley tables'
          : 'the database holds no Parley tables, but the data directory says it holds a store; restore it from a backup',
      ]);
    }
    if (!readonly) {
      const damage = integrityProblems(raw, false, 10);
      if (damage.length > 0) {
        throw new StoreIntegrityError(file, [
          `PRAGMA quick_check found damage (run \`parley store check\` for the full report):`,
          ...damage,
        ]);
      }
    }
    return raw;
  } catch (err) {
    raw?.close();
    if (err instanceof StoreIntegrityError) throw err;
    const e = err as Error & { code?: string };
    throw new StoreIntegrityError(file, [`${e.code ? `${e.code}: ` : ''}${e.message}`]);
  }
}

/** Applies pending migrations; a read-only store must need none. */
async function migrate(db: Db, file: string, readOnly: boolean): Promise<void> {
  const migrator = new Migrator({ db, provider: migrationProvider('sqlite') });
  if (readOnly) {
    const pending = (await migrator.getMigrations()).filter((m) => m.executedAt === undefined);
    if (pending.length > 0) {
      throw new StoreIntegrityError(file, [
        `the schema is older than this tool (${pending.length} migrations pending); open it read-write once`,
      ]);
    }
    return;
  }
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    throw new StoreIntegrityError(file, [`migration failed${failed ? ` at ${failed.migrationName}` : ''}: ${String(error)}`]);
  }
}

async function openOn(raw: SqliteDatabase.Database, file: string, options: { health?: WriteHealth; readOnly?: boolean }): Promise<Db> {
  // A read-only connection's transactions only read: begun deferred, they hold no write lock up.
  const config = { database: withStatementCache(raw) };
  const sqlite = options.readOnly ? new SqliteDialect(config) : new ImmediateSqliteDialect(config);
  const dialect = options.health ? observedDialect(sqlite, options.health, () => raw.inTransaction) : sqlite;
  const db = new Kysely<Database>({ dialect });
  try {
    await migrate(db, file, options.readOnly === true);
  } catch (err) {
    await db.destroy();
    throw err;
  }
  return db;
}

/**
 * Opens (creating if needed, unless `mustExist`) `<dataDir>/parley.db` in WAL
 * mode and applies pending migrations; with `readOnly`, opens an existing
 * store for reading only (its schema must be current).
 */
export async function openSqlite(options: OpenOptions): Promise<Db> {
  return (await openSqliteConnection(options)).db;
}

/**
 * `openSqlite`, also returning the better-sqlite3 handle under kysely, for the
 * few statements the embedded store runs prepared and directly (the send
 * path's idempotency look-up). Only code under `sqlite/` uses it.
 */
export async function openSqliteConnection(options: OpenOptions): Promise<{ db: Db; raw: SqliteDatabase.Database }> {
  if (!options.readOnly) mkdirSync(options.dataDir, { recursive: true });
  const file = join(options.dataDir, STORE_FILE);
  const raw = openChecked(file, options);
  return { db: await openOn(raw, file, options), raw };
}

/** A fresh store in memory, with the current schema: for unit tests of services and repositories. */
export async function openMemorySqlite(): Promise<Db> {
  return (await openMemorySqliteConnection()).db;
}

/** `openMemorySqlite`, also returning the better-sqlite3 handle under kysely (as `openSqliteConnection`). */
export async function openMemorySqliteConnection(): Promise<{ db: Db; raw: SqliteDatabase.Database }> {
  const raw = new SqliteDatabase(':memory:');
  return { db: await openOn(raw, ':memory:', {}), raw };
}
