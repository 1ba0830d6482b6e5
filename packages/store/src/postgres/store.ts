import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import type { Db } from '../db.ts';
import { createRepositories } from '../repositories/index.ts';
import type { Store } from '../store.ts';
import { WriteHealth, type HealthLog } from '../sqlite/write-health.ts';
import type { AppendFence } from '../errors.ts';
import { StoreIntegrityError } from '../sqlite/integrity.ts';
import { appendInOneStatement, ONE_STATEMENT_ROWS } from './append.ts';
import { postgresFailureKind } from './health.ts';
import { openPostgres, storeLabel, type PostgresOpenOptions } from './open.ts';
import { parsePostgresUrl } from './url.ts';

/** Longest a successful committed probe is reused, ms. */
const PROBE_REUSE_MS = 1000;
/** Least time a probe gets, ms: a pool checkout and a commit over the network, not a local lock. */
const PROBE_FLOOR_MS = 1000;
/** Extra time the caller waits beyond the statement timeout, ms. */
const PROBE_GRACE_MS = 500;

/** `work`, or a rejection once `ms` have passed (the work itself is left to its own statement timeout). */
async function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the store did not answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
    work.catch(() => {});
  }
}

const SILENT: HealthLog = { error() {}, warn() {}, info() {} };

/**
 * PostgreSQL's write probe: at most once per second (or on every call while
 * writes fail) a committed one-row write under a statement timeout; otherwise
 * a round trip. There is no store-wide write lock to wait for, so `waitMs` is
 * the time the probe may take (at least a second).
 */
function writeProbe(db: Db, health: WriteHealth, lastAppendAt: () => number): (waitMs: number) => Promise<void> {
  let lastProbeOk = 0;
  return async (waitMs) => {
    // A batch committed within the reuse time already proves the store commits.
    if (health.failing === undefined && performance.now() - lastAppendAt() < PROBE_REUSE_MS) return;
    const limit = Math.max(PROBE_FLOOR_MS, Math.floor(waitMs));
    const commit = health.failing !== undefined || performance.now() - lastProbeOk >= PROBE_REUSE_MS;
    const probe = commit
      ? db.transaction().execute(async (trx) => {
          await sql.raw(`set local statement_timeout = ${limit}`).execute(trx);
          await sql`insert into meta (key, value) values ('write_probe', ${String(Date.now())})
            on conflict (key) do update set value = excluded.value`.execute(trx);
        })
      : sql`select 1`.execute(db);
    // The statement timeout should fire first, with the server's own reason; this bounds a checkout from a full pool.
    await withTimeout<unknown>(probe, limit + PROBE_GRACE_MS);
    if (commit) lastProbeOk = performance.now();
  };
}

/** A PostgreSQL store: the same repositories as SQLite, plus where it lives. */
export interface PostgresStore extends Store {
  /** The URL without password and the schema, for logs. */
  label: string;
  schema: string;
}

/** The store at `store.postgres_url`; `log` receives its write-failure reports. */
export async function openPostgresStore(
  options: Omit<PostgresOpenOptions, 'health' | 'readOnly'> & { log?: HealthLog },
): Promise<PostgresStore> {
  const location = parsePostgresUrl(options.url);
  const label = storeLabel(location);
  const health = new WriteHealth(
    label,
    options.log ?? SILENT,
    postgresFailureKind,
    () => `PostgreSQL at ${location.host}:${location.port}`,
  );
  const { db } = await openPostgres({ ...options, health });
  // `parleyctl migrate import` marks a schema it is still filling (killed half-way, it stays marked): never serve it.
  const partial = await sql<{ n: number }>`select count(*) as n from meta where key = 'import_partial'`
    .execute(db)
    .catch(async (err: unknown) => {
      await db.destroy();
      throw err;
    });
  if (Number(partial.rows[0]?.n ?? 0) > 0) {
    await db.destroy();
    throw new StoreIntegrityError(label, [
      'the schema holds a parleyctl import that did not complete; run the same `parleyctl migrate import` command again and start the targets it names',
    ]);
  }
  const repositories = createRepositories(db, 'postgres');
  // One statement per batch (one round trip) where it fits; the transaction path otherwise.
  const inTransaction = repositories.messages.appendBatch;
  let lastAppendAt = -Infinity;
  repositories.messages.appendBatch = (rows, marks, fence, members = []) => {
    const fences = fence === undefined ? [] : Array.isArray(fence) ? (fence as readonly AppendFence[]) : [fence as AppendFence];
    const done =
      rows.length === 0 || rows.length > ONE_STATEMENT_ROWS || members.length > 2 * ONE_STATEMENT_ROWS
        ? inTransaction(rows, marks, fence, members)
        : appendInOneStatement(db, rows, marks, fences, members);
    return done.then(() => {
      if (rows.length > 0) lastAppendAt = performance.now();
    });
  };
  return {
    ...repositories,
    label,
    schema: location.schema,
    health,
    async ping() {
      // A round trip, bounded: a lock on a table must not hang readiness.
      await withTimeout(sql`select 1`.execute(db), PROBE_FLOOR_MS);
    },
    probeWrite: writeProbe(db, health, () => lastAppendAt),
    close: () => db.destroy(),
  };
}
