import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, basename, join } from 'node:path';
import Database from 'better-sqlite3';
import {
  CLUSTER_META_FILE,
  DATA_FORMAT_FILE,
  DATA_FORMAT_VERSION,
  IMPORT_PARTIAL_FILE,
  MIGRATION_MARKER_FILE,
  STARTED_MARKER_FILE,
  type ClusterMeta,
  type DataFormat,
  type MigrationMarker,
} from '@parley/shared';
import { openSqlite } from '@parley/server';
import type { Policy } from '../policy.ts';
import { progress, readJsonFile, StageError, toolIdentity } from '../stages/common.ts';
import { contentDigest } from './content-digest.ts';
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
 * An existing target: allowed only when this same import finished it, it was
 * never started, and its content still has the recorded fingerprint.
 */
function checkExisting(dir: string, identity: ImportIdentity): NodeResult {
  const markerFile = join(dir, MIGRATION_MARKER_FILE);
  if (!existsSync(markerFile)) throw new StageError([`target ${dir} exists without a migration identity; targets must be new`]);
  if (existsSync(join(dir, STARTED_MARKER_FILE)))
    throw new StageError([`target ${dir} has been started by the server; a started target is never overwritten or re-imported`]);
  const marker = readJsonFile<MigrationMarker>(markerFile);
  const diffs = (['plan_sha256', 'archive_manifest_sha256', 'selection_digest'] as const).filter((k) => marker[k] !== identity[k]);
  if (diffs.length > 0)
    throw new StageError([`target ${dir} was imported from another plan or archive (${diffs.join(', ')} differ); use a new target`]);
  const raw = new Database(join(dir, 'parley.db'), { readonly: true, fileMustExist: true });
  try {
    const got = contentDigest(raw);
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
    raw.close();
  }
}

/**
 * Writes one target node's data directory: built beside the target and
 * renamed into place once complete, so the target path only ever holds a
 * finished import. Store schema comes from the server's own migrations.
 */
export async function writeNode(
  dir: string,
  nodeId: number,
  cluster: ClusterMeta,
  identity: ImportIdentity,
  records: string,
  policy: Policy,
): Promise<NodeResult> {
  if (existsSync(dir)) return checkExisting(dir, identity);
  const work = partialDir(dir);
  if (existsSync(work)) {
    // an interrupted import of this tool: killed before its partial mark was written (empty), while building
    // (the mark), or between removing the mark and the rename (a marker of this same import)
    const entries = readdirSync(work);
    const marker = existsSync(join(work, MIGRATION_MARKER_FILE))
      ? readJsonFile<MigrationMarker>(join(work, MIGRATION_MARKER_FILE))
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
  const store = await openSqlite({ dataDir: work, sync: 'normal' });
  await store.destroy();
  const raw = new Database(join(work, 'parley.db'));
  let digest: { sha256: string; rows: Record<string, number> };
  let derived: Record<string, number>;
  try {
    raw.pragma('journal_mode = WAL');
    raw.pragma('synchronous = NORMAL');
    derived = deriveInto(raw, records, policy);
    raw.pragma('wal_checkpoint(TRUNCATE)');
    // a single-file store: read-only openers (verify, db info) then leave no -wal/-shm files behind
    raw.pragma('journal_mode = DELETE');
    digest = contentDigest(raw);
  } finally {
    raw.close();
  }
  const tool = { name: 'parleyctl', ...toolIdentity() };
  const now = new Date().toISOString();
  const format: DataFormat = { data_format: DATA_FORMAT_VERSION, created_by: tool, created_at: now };
  json(join(work, DATA_FORMAT_FILE), format);
  json(join(work, CLUSTER_META_FILE), cluster);
  const marker: MigrationMarker = {
    identity: 'parley-migration',
    node_id: nodeId,
    cluster,
    ...identity,
    content_sha256: digest.sha256,
    derived,
    imported_at: now,
    tool,
  };
  json(join(work, MIGRATION_MARKER_FILE), marker);
  rmSync(join(work, PARTIAL_MARK));
  renameSync(work, dir);
  return { node_id: nodeId, data_dir: dir, reused: false, content_sha256: digest.sha256, rows: digest.rows, derived };
}
