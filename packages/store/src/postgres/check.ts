import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { contentDigest } from '../content-digest.ts';
import { StoreIntegrityError, type StoreCheckReport } from '../sqlite/integrity.ts';
import { openPostgres, storeLabel } from './open.ts';
import { parsePostgresUrl } from './url.ts';

/**
 * `parley store check` on PostgreSQL, reading only: the schema must hold
 * Parley's tables with current migrations; every row of every content table
 * is read (the server verifies data page checksums on read when the cluster
 * has them on); with the `amcheck` extension installed, every B-tree index of
 * the schema is checked with `bt_index_check`. Safe while nodes run.
 */
export async function checkPostgresStore(url: string): Promise<StoreCheckReport> {
  const started = performance.now();
  let path = 'store.postgres_url';
  const notes: string[] = [];
  const report = (problems: string[]): StoreCheckReport => ({
    path,
    ok: problems.length === 0,
    problems,
    took_ms: Math.round(performance.now() - started),
    ...(notes.length > 0 ? { notes } : {}),
  });
  let opened: Awaited<ReturnType<typeof openPostgres>> | undefined;
  try {
    const location = parsePostgresUrl(url);
    path = storeLabel(location);
    opened = await openPostgres({ url, readOnly: true, poolSize: 1 });
    const { db } = opened;
    const digest = await contentDigest(db);
    notes.push(`read ${Object.values(digest.rows).reduce((a, b) => a + b, 0)} rows of ${Object.keys(digest.rows).length} tables`);
    const { rows: ext } = await sql<{ schema: string }>`select n.nspname as schema from pg_extension e
      join pg_namespace n on n.oid = e.extnamespace where e.extname = 'amcheck'`.execute(db);
    const amcheck = ext[0]?.schema;
    if (amcheck === undefined) {
      notes.push('indexes not checked: the amcheck extension is not installed (create extension amcheck)');
      return report([]);
    }
    const { rows: indexes } = await sql<{ name: string }>`select c.relname as name from pg_index i
      join pg_class c on c.oid = i.indexrelid join pg_namespace n on n.oid = c.relnamespace join pg_am a on a.oid = c.relam
      where n.nspname = ${location.schema} and a.amname = 'btree' order by c.relname`.execute(db);
    const problems: string[] = [];
    for (const { name } of indexes) {
      try {
        await sql`select ${sql.id(amcheck, 'bt_index_check')}(${sql.raw(`'${location.schema}.${name}'`)}::regclass)`.execute(db);
      } catch (err) {
        problems.push(`index ${name}: ${(err as Error).message}`);
      }
    }
    notes.push(`checked ${indexes.length} indexes with amcheck`);
    return report(problems);
  } catch (err) {
    if (err instanceof StoreIntegrityError) return report(err.problems);
    const e = err as Error & { code?: string };
    return report([`${e.code ? `${e.code}: ` : ''}${e.message}`]);
  } finally {
    await opened?.db.destroy();
  }
}
