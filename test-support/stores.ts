/**
 * The store engines server tests run on: SQLite always, PostgreSQL when the
 * test server answers (`@parley/store/testing`: `PARLEY_TEST_POSTGRES_URL`,
 * default the local server; required under `CI=true`). A PostgreSQL run gets a
 * schema of its own, dropped by `drop()`.
 */
import { createTestSchema, postgresReachable } from '@parley/store/testing';

export type StoreDriver = 'sqlite' | 'postgres';

/** Whether the PostgreSQL test server answers (skip message printed once per file otherwise). */
export const postgresUp = await postgresReachable();

/** `['sqlite', 'postgres']`, or only SQLite when PostgreSQL is not reachable here. */
export const STORE_DRIVERS: StoreDriver[] = postgresUp ? ['sqlite', 'postgres'] : ['sqlite'];

/** The `PARLEY_STORE_*` env that puts a node on `driver` (a fresh schema for PostgreSQL), and its cleanup. */
export interface StoreEnv {
  env: Record<string, string>;
  /** PostgreSQL: the schema's name; '' for SQLite. */
  schema: string;
  url: string;
  drop(): Promise<void>;
}

export function storeEnv(driver: StoreDriver, prefix = 'parley_srv'): StoreEnv {
  if (driver === 'sqlite') return { env: {}, schema: '', url: '', drop: async () => {} };
  const s = createTestSchema(prefix);
  return {
    env: { PARLEY_STORE_DRIVER: 'postgres', PARLEY_STORE_POSTGRES_URL: s.url, PARLEY_STORE_POSTGRES_POOL_SIZE: '4' },
    schema: s.schema,
    url: s.url,
    drop: () => s.drop(),
  };
}
