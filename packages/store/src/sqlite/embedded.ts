import { join } from 'node:path';
import { sql } from 'kysely';
import type { Db } from '../db.ts';
import { createRepositories } from '../repositories/index.ts';
import type { Store } from '../store.ts';
import { STORE_FILE } from './integrity.ts';
import { BUSY_TIMEOUT_MS, openMemorySqlite, openSqlite, type OpenOptions } from './open.ts';
import { WriteHealth, type HealthLog } from './write-health.ts';

/** Longest a successful write probe is reused, ms. */
const PROBE_REUSE_MS = 1000;

/** SQLite's write probe: `begin immediate` under a short busy timeout, and now and then a committed one-row write. */
function writeProbe(db: Db, health: WriteHealth): (waitMs: number) => Promise<void> {
  let lastProbeOk = 0;
  return async (waitMs) => {
    const commit = health.failing !== undefined || performance.now() - lastProbeOk >= PROBE_REUSE_MS;
    // One connection checkout: no other query runs between the pragmas, so none sees the short wait.
    await db.connection().execute(async (c) => {
      await sql.raw(`pragma busy_timeout = ${Math.max(0, Math.floor(waitMs))}`).execute(c);
      try {
        await sql.raw('begin immediate').execute(c);
        if (!commit) {
          await sql.raw('rollback').execute(c);
          return;
        }
        try {
          await sql`insert into meta (key, value) values ('write_probe', ${String(Date.now())}) on conflict (key) do update set value = excluded.value`.execute(
            c,
          );
          await sql.raw('commit').execute(c);
        } catch (err) {
          await sql.raw('rollback').execute(c);
          throw err;
        }
      } finally {
        await sql.raw(`pragma busy_timeout = ${BUSY_TIMEOUT_MS}`).execute(c);
      }
    });
    if (commit) lastProbeOk = performance.now();
  };
}

const SILENT: HealthLog = { error() {}, warn() {}, info() {} };

/** The embedded store: `<dataDir>/parley.db`; `log` receives its write-failure reports. */
export async function openEmbeddedStore(options: Omit<OpenOptions, 'health' | 'readOnly'> & { log?: HealthLog }): Promise<Store> {
  const health = new WriteHealth(join(options.dataDir, STORE_FILE), options.log ?? SILENT);
  return storeOn(await openSqlite({ ...options, health }), health);
}

/** A store in memory with the current schema, for service and route tests: the same repositories, no file. */
export async function openMemoryStore(): Promise<Store> {
  return storeOn(await openMemorySqlite(), new WriteHealth(':memory:', SILENT));
}

function storeOn(db: Db, health: WriteHealth): Store {
  return {
    ...createRepositories(db),
    health,
    async ping() {
      await db.selectFrom('meta').select('key').limit(1).execute();
    },
    probeWrite: writeProbe(db, health),
    close: () => db.destroy(),
  };
}
