import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, basename, join } from 'node:path';
import {
  CLUSTER_META_FILE,
  DATA_FORMAT_FILE,
  DATA_FORMAT_VERSION,
  IMPORT_PARTIAL_FILE,
  MIGRATION_MARKER_FILE,
  STARTED_MARKER_FILE,
  type ClusterMeta,
  type DataFormat,
  MigrationMarker,
  type StoreLocation,
} from '@parley/shared';
import { openImportTarget, openStoreReader, STORE_FILE } from '@parley/store';
import type { Policy } from '../policy.ts';
import { progress, readJsonFile, StageError, toolIdentity } from '../stages/common.ts';
import { deriveInto } from './derive.ts';

/** What binds a target to one import: the plan, the archive and the selection. */
export interface ImportIdentity {
  plan_sha256: string;
  archive_manifest_sha256: string;
  selection_digest: string;
}

export interface NodeResult {
  node_id: number;
  data_dir: string;
  reused: boolean;
  content_sha256: string;
  rows: Record<string, number>;
  /** What the derivation did beyond copying rows (hidden memberships, bindings, archived unread counts). */
  derived: Record<string, number>;
}

/** File written first into a directory under construction, so a rerun knows it may discard it (and the server refuses it). */
const PARTIAL_MARK = IMPORT_PARTIAL_FILE;

/** The directory an import builds beside the target before renaming it into place. */
export function partialDir(dir: string): string {
  return join(dirname(dir), `.${basename(dir)}.importing`);
}

function json(file: string, value: unknown): void {
  writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
}

/**
 * The migration marker of an existing target directory, refused unless this
 * same import (plan, archive, selection) wrote it and the server never started it.
 */
export function readOwnMarker(dir: string, identity: ImportIdentity): MigrationMarker {
  const markerFile = join(dir, MIGRATION_MARKER_FILE);
  if (!existsSync(markerFile)) throw new StageError([`target ${dir} exists without a migration identity; targets must be new`]);
  if (existsSync(join(dir, STARTED_MARKER_FILE)))
    throw new StageError([`target ${dir} has been started by the server; a started target is never overwritten or re-imported`]);
  const marker = readJsonFile(MigrationMarker, markerFile);
  const diffs = (['plan_sha256', 'archive_manifest_sha256', 'selection_digest'] as const).filter((k) => marker[k] !== identity[k]);
  if (diffs.length > 0)
    throw new StageError([`target ${dir} was imported from another plan or archive (${diffs.join(', ')} differ); use a new target`]);
  return marker;
}

/**
 * An existing target: allowed only when this same import finished it, it was
 * never started, and its content still has the recorded fingerprint.
 */
async function checkExisting(dir: string, identity: ImportIdentity): Promise<NodeResult> {
  const marker = readOwnMarker(dir, identity);
  if (!existsSync(join(dir, STORE_FILE))) throw new StageError([`target ${dir}: ${STORE_FILE} is missing`]);
  const store = await openStoreReader(dir);
  try {
    const got = await store.contentDigest();
    if (got.sha256 !== marker.content_sha256)
      throw new StageError([`target ${dir}: store content differs from its migration marker (fingerprint mismatch)`]);
    return {
      node_id: marker.node_id,
      data_dir: dir,
      reused: true,
      content_sha256: got.sha256,
      rows: got.rows,
      derived: marker.derived ?? {},
    };
  } finally {
    await store.close();
  }
}

/**
 * The directory a node is built in (beside `dir`, renamed into place once
 * complete), made new and holding the partial mark; an interrupted import of
 * the same plan and archive found there is discarded first.
 */
export function claimWorkDir(dir: string, identity: ImportIdentity): string {
  const work = partialDir(dir);
  if (existsSync(work)) {
    // an interrupted import of this tool: killed before its partial mark was written (empty), while building
    // (the mark), or between removing the mark and the rename (a marker of this same import)
    const entries = readdirSync(work);
    const marker = existsSync(join(work, MIGRATION_MARKER_FILE))
      ? readJsonFile(MigrationMarker, join(work, MIGRATION_MARKER_FILE))
      : undefined;
    const ours =
      entries.length === 0 ||
      entries.includes(PARTIAL_MARK) ||
      (marker !== undefined &&
        marker.plan_sha256 === identity.plan_sha256 &&
        marker.archive_manifest_sha256 === identity.archive_manifest_sha256);
    if (!ours || existsSync(join(work, STARTED_MARKER_FILE)))
      throw new StageError([`${work} exists and is not an interrupted import of this plan and archive; remove it or use another target`]);
    progress(`import: discarding the interrupted import in ${work}; starting the node again`);
    rmSync(work, { recursive: true });
  }
  mkdirSync(dirname(work), { recursive: true });
  mkdirSync(work, { mode: 0o700 });
  json(join(work, PARTIAL_MARK), identity);
  return work;
}

/**
 * Writes a node's markers into its work directory (data format, cluster
 * metadata, migration marker; each naming `store` when it is not SQLite in
 * the directory), removes the partial mark and renames it into place.
 */
export function finishWorkDir(
  work: string,
  dir: string,
  nodeId: number,
  cluster: ClusterMeta,
  identity: ImportIdentity,
  content: { sha256: string; derived: Record<string, number> },
  store?: StoreLocation,
): void {
  const tool = { name: 'parleyctl', ...toolIdentity() };
  const now = new Date().toISOString();
  const format: DataFormat = { data_format: DATA_FORMAT_VERSION, created_by: tool, created_at: now, ...(store ? { store } : {}) };
  json(join(work, DATA_FORMAT_FILE), format);
  json(join(work, CLUSTER_META_FILE), cluster);
  const marker: MigrationMarker = {
    identity: 'parley-migration',
    node_id: nodeId,
    cluster,
    ...identity,
    content_sha256: content.sha256,
    derived: content.derived,
    imported_at: now,
    tool,
    ...(store ? { store } : {}),
  };
  json(join(work, MIGRATION_MARKER_FILE), marker);
  rmSync(join(work, PARTIAL_MARK));
  renameSync(work, dir);
}

/**
 * Writes one target node's data directory: built beside the target and
 * renamed into place once complete, so the target path only ever holds a
 * finished import. The store's schema comes from `@parley/store`'s migrations,
 * the same the server runs.
 */
export async function writeNode(
  dir: string,
  nodeId: number,
  cluster: ClusterMeta,
  identity: ImportIdentity,
  records: string,
  policy: Policy,
): Promise<NodeResult> {
  if (existsSync(dir)) return await checkExisting(dir, identity);
  const work = claimWorkDir(dir, identity);
  const target = await openImportTarget(work);
  let digest: { sha256: string; rows: Record<string, number> };
  let derived: Record<string, number>;
  try {
    derived = await deriveInto(target, records, policy);
    // a single-file store: read-only openers (verify, db info) then leave no -wal/-shm files behind
    digest = await target.seal();
  } finally {
    await target.close();
  }
  finishWorkDir(work, dir, nodeId, cluster, identity, { sha256: digest.sha256, derived });
  return { node_id: nodeId, data_dir: dir, reused: false, content_sha256: digest.sha256, rows: digest.rows, derived };
}
