import { existsSync } from 'node:fs';
import { type MigrationMarker, type ClusterMeta, type PlanTargetNode, type PlanTargetStore, type StoreLocation } from '@parley/shared';
import { openPostgresImportTarget, openPostgresStoreReader, readPostgresImportMarks } from '@parley/store';
import { parsePostgresUrl } from '@parley/store/postgres-url';
import type { Policy } from '../policy.ts';
import { canonicalJson, progress, StageError } from '../stages/common.ts';
import { deriveInto } from './derive.ts';
import { claimWorkDir, finishWorkDir, readOwnMarker, type ImportIdentity, type NodeResult } from './write-node.ts';

/** The store a PostgreSQL target's markers name: where, never who (no user, no password). */
export function postgresLocation(store: PlanTargetStore): StoreLocation & { driver: 'postgres' } {
  const { host, port, database, schema } = parsePostgresUrl(store.postgres_url);
  return { driver: 'postgres', host, port, database, schema };
}

/** What a finished import leaves in the schema's `meta` (`import_finished`). */
interface FinishedImport {
  identity: ImportIdentity;
  content_sha256: string;
  rows: Record<string, number>;
  derived: Record<string, number>;
}

const sameIdentity = (a: ImportIdentity, b: ImportIdentity) =>
  a.plan_sha256 === b.plan_sha256 && a.archive_manifest_sha256 === b.archive_manifest_sha256 && a.selection_digest === b.selection_digest;

/** An existing node directory of this import: never started, same identity and store, same content. */
function checkExistingNode(dir: string, identity: ImportIdentity, where: StoreLocation): MigrationMarker {
  const marker = readOwnMarker(dir, identity);
  if (canonicalJson(marker.store ?? null) !== canonicalJson(where))
    throw new StageError([`target ${dir} names another store than plan.target.store; use a new target`]);
  return marker;
}

/**
 * A multi-node (or any PostgreSQL) target: the archive goes once into the
 * schema `target.store` names — shared by every node — and each node's
 * `data_dir` gets only its markers (data format, cluster metadata, migration
 * marker), all naming that store and its content fingerprint.
 *
 * Reruns: the schema holds a partial mark from its first statement to the
 * end, so an import killed half-way is dropped and redone by the same plan
 * and archive (and refused to anyone else); a finished import is recognised
 * by its record in `meta` and checked by fingerprint (a node started on it
 * changes it, and is refused); node directories are built beside their
 * target and renamed into place, as for SQLite targets.
 */
export async function writePostgresTarget(
  store: PlanTargetStore,
  nodes: readonly PlanTargetNode[],
  cluster: ClusterMeta,
  identity: ImportIdentity,
  records: string,
  policy: Policy,
): Promise<NodeResult[]> {
  const where = postgresLocation(store);
  const url = store.postgres_url;
  const existing = new Map<number, MigrationMarker>();
  for (const n of nodes) if (existsSync(n.data_dir)) existing.set(n.node_id, checkExistingNode(n.data_dir, identity, where));

  const mark = canonicalJson(identity);
  const marks = await readPostgresImportMarks(url);
  let content: FinishedImport;
  let reused = false;
  if (marks.finished !== undefined) {
    const finished = JSON.parse(marks.finished) as FinishedImport;
    if (!sameIdentity(finished.identity, identity))
      throw new StageError([`plan.target.store: schema ${where.schema} holds another import (another plan or archive); use a new schema`]);
    const reader = await openPostgresStoreReader(url);
    try {
      const got = await reader.contentDigest();
      if (got.sha256 !== finished.content_sha256)
        throw new StageError([
          `plan.target.store: schema ${where.schema} changed since this import finished (a node was started on it?); it is never re-imported`,
        ]);
      content = { ...finished, rows: got.rows };
    } finally {
      await reader.close();
    }
    reused = true;
    progress(`import: schema ${where.schema} already holds this import; fingerprint checked`);
  } else {
    if (marks.partial === mark) progress(`import: discarding the interrupted import in schema ${where.schema}; importing again`);
    const target = await openPostgresImportTarget(url, mark, mark).catch((err: unknown) => {
      throw new StageError([`plan.target.store: ${(err as Error).message}`]);
    });
    try {
      const derived = await deriveInto(target, records, policy);
      const digest = await target.seal();
      content = { identity, content_sha256: digest.sha256, rows: digest.rows, derived };
      await target.finish(JSON.stringify(content));
    } finally {
      await target.close();
    }
  }

  const results: NodeResult[] = [];
  for (const n of nodes) {
    const marker = existing.get(n.node_id);
    if (marker) {
      if (marker.content_sha256 !== content.content_sha256)
        throw new StageError([`target ${n.data_dir}: its marker's fingerprint differs from the store's; use new targets and a new schema`]);
    } else {
      const work = claimWorkDir(n.data_dir, identity);
      finishWorkDir(work, n.data_dir, n.node_id, cluster, identity, { sha256: content.content_sha256, derived: content.derived }, where);
    }
    results.push({
      node_id: n.node_id,
      data_dir: n.data_dir,
      reused: reused && marker !== undefined,
      content_sha256: content.content_sha256,
      rows: content.rows,
      derived: content.derived,
    });
  }
  return results;
}
