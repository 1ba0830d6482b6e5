import { performance } from 'node:perf_hooks';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { DATA_FORMAT_FILE, MIGRATION_MARKER_FILE } from '@parley/shared';

/** The embedded store's file name inside `node.data_dir`. */
export const STORE_FILE = 'parley.db';

/** A store that must not be opened: missing, empty, corrupt or unreadable. Always names the path. */
export class StoreIntegrityError extends Error {
  constructor(
    readonly path: string,
    readonly problems: string[],
  ) {
    super(`store ${path} refused:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'StoreIntegrityError';
  }
}

/**
 * Whether the directory says it already holds a store: a data-format file
 * (written when the store was created) or a migration marker (an imported
 * store). Returns that marker's path, or undefined for a new directory.
 */
export function storeMarker(dir: string): string | undefined {
  for (const name of [MIGRATION_MARKER_FILE, DATA_FORMAT_FILE]) {
    const file = join(dir, name);
    if (existsSync(file)) return file;
  }
  return undefined;
}

/**
 * Refuses a directory whose marker says it holds data while its database is
 * missing or empty (0 bytes): opening it would silently start a new, empty
 * store and every earlier message would be gone.
 */
export function assertStorePresent(dir: string): void {
  const marker = storeMarker(dir);
  if (!marker) return;
  const file = join(dir, STORE_FILE);
  const fix = `restore ${STORE_FILE} (with its -wal file) from a backup, or move ${marker} away to start an empty store here`;
  if (!existsSync(file))
    throw new StoreIntegrityError(file, [`the database is missing, but ${marker} says this directory holds a store; ${fix}`]);
  if (statSync(file).size === 0)
    throw new StoreIntegrityError(file, [`the database is empty (0 bytes), but ${marker} says this directory holds a store; ${fix}`]);
}

/** Rows of SQLite's own check that are not "ok"; at most `max` of them. */
export function integrityProblems(db: SqliteDatabase.Database, full: boolean, max = 100): string[] {
  const rows = db.pragma(`${full ? 'integrity_check' : 'quick_check'}(${max})`) as Array<Record<string, string>>;
  const lines = rows.map((r) => Object.values(r)[0] ?? '');
  return lines.length === 1 && lines[0] === 'ok' ? [] : lines;
}

/** Whether a database already holds Parley's schema (its migrations table). */
export function hasSchema(db: SqliteDatabase.Database): boolean {
  const row = db.prepare("select count(*) as n from sqlite_master where type = 'table' and name = 'kysely_migration'").get() as {
    n: number;
  };
  return row.n > 0;
}

/** What `parley store check` reports. */
export interface StoreCheckReport {
  path: string;
  ok: boolean;
  /** SQLite's integrity_check lines (at most 100), or why the file could not be checked. */
  problems: string[];
  /** Duration of the check, ms. */
  took_ms: number;
  /** What was checked and what could not be (PostgreSQL). */
  notes?: string[];
}

/**
 * Runs SQLite's full `PRAGMA integrity_check` on `<dataDir>/parley.db`,
 * reading only (it runs in a read transaction, so a running server keeps
 * committing meanwhile).
 */
export function checkStoreFile(dataDir: string): StoreCheckReport {
  const path = join(dataDir, STORE_FILE);
  const started = performance.now();
  const report = (problems: string[]) => ({ path, ok: problems.length === 0, problems, took_ms: Math.round(performance.now() - started) });
  let db: SqliteDatabase.Database | undefined;
  try {
    assertStorePresent(dataDir);
    if (!existsSync(path)) return report(['the database does not exist']);
    db = new SqliteDatabase(path, { fileMustExist: true });
    db.pragma('busy_timeout = 5000');
    if (!hasSchema(db)) return report(['the database holds no Parley tables']);
    return report(integrityProblems(db, true));
  } catch (err) {
    if (err instanceof StoreIntegrityError) return report(err.problems);
    const e = err as Error & { code?: string };
    return report([`${e.code ? `${e.code}: ` : ''}${e.message}`]);
  } finally {
    db?.close();
  }
}
