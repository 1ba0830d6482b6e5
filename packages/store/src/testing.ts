import process from 'node:process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { STORE_FILE } from './sqlite/integrity.ts';

/**
 * Test support (`@parley/store/testing`): what another process does to a
 * store, done on purpose so tests can show how the server takes it.
 */

/**
 * Takes the write lock of `<dataDir>/parley.db` from a second, real SQLite
 * connection, as a backup tool or an operator's shell would, until `release`.
 */
export function holdWriteLock(dataDir: string): { release(): void } {
  const other = new SqliteDatabase(join(dataDir, STORE_FILE));
  other.exec('begin immediate');
  return {
    release() {
      other.exec('rollback');
      other.close();
    },
  };
}

/** The PostgreSQL server tests use: `PARLEY_TEST_POSTGRES_URL`, or the local one (trust auth, database `test`). */
export const TEST_POSTGRES_URL = process.env.PARLEY_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A schema of its own for one test run, with the URL that selects it; `drop()` removes it and everything in it. */
export interface TestSchema {
  schema: string;
  /** `TEST_POSTGRES_URL` with `options=-c search_path=<schema>`. */
  url: string;
  drop(): Promise<void>;
}

/** `base` with its `search_path` set to `schema` (replacing any `options`). */
export function withSearchPath(base: string, schema: string): string {
  const u = new URL(base);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return u.href;
}

/**
 * Names a fresh schema (`<prefix>_<pid>_<random>`) on the test server; it is
 * created by whatever opens the URL first. Call `drop()` after the run.
 */
export function createTestSchema(prefix = 'parley_test'): TestSchema {
  const schema = `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`.toLowerCase();
  return {
    schema,
    url: withSearchPath(TEST_POSTGRES_URL, schema),
    async drop() {
      const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
      await client.connect();
      try {
        await client.query(`drop schema if exists "${schema}" cascade`);
      } finally {
        await client.end();
      }
    },
  };
}

/**
 * Whether the test PostgreSQL server answers. Tests that need it skip when it
 * does not — except under CI (`CI` set to anything but empty, `0` or
 * `false`), where its absence fails the run with the URL named.
 */
export async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch (err) {
    const required = !['', '0', 'false'].includes((process.env.CI ?? '').toLowerCase());
    const what = `PostgreSQL for tests not reachable at ${new URL(TEST_POSTGRES_URL).host} (${(err as Error).message}; set PARLEY_TEST_POSTGRES_URL)`;
    if (required) throw new Error(`${what}; CI=true requires it`, { cause: err });
    console.warn(`${what}; the PostgreSQL tests are skipped`);
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}
