import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { MAX_FORMAT_MAJOR_VERSION } from '@parley/pebble';
import {
  CLUSTER_META_FILE,
  DATA_FORMAT_FILE,
  MIGRATION_MARKER_FILE,
  STARTED_MARKER_FILE,
  ClusterMeta,
  DataFormat,
  MigrationMarker,
  StartedMarker,
  type StoreLocation,
} from '@parley/shared';
import type { Static, TSchema } from '@sinclair/typebox';
import { readJsonFile } from './stages/common.ts';
import { lockHolders, readLockTable } from './source/lock.ts';
import { listShards } from './source/shards.ts';
import { clusterDbDirs } from './stages/prepare.ts';

/** What `parleyctl db info <dir>` reports. */
export type DbInfo =
  | { kind: 'pebble'; dir: string; format_major_version: number; supported: boolean }
  | {
      kind: 'v2_data_dir';
      dir: string;
      shards: Array<{ shard: string; format_major_version: number }>;
      /** The Pebble LOCK files of its databases (shards, cluster logs) and who holds one: a running v2 node. */
      locks?: SourceLocks;
    }
  | {
      kind: 'parley_data_dir';
      dir: string;
      data_format: number | null;
      created_by: DataFormat['created_by'] | null;
      migration: Pick<MigrationMarker, 'node_id' | 'selection_digest' | 'imported_at' | 'tool'> | null;
      cluster: ClusterMeta | null;
      started: StartedMarker | null;
      /** Where its store is: SQLite in the directory, or a PostgreSQL database and schema (never credentials). */
      store: StoreLocation;
    }
  | { kind: 'unknown'; dir: string; reason: string };

/** The LOCK check prepare makes, on its own: how many LOCK files there are, and the held ones. */
export interface SourceLocks {
  checked: number;
  held: Array<{ file: string; holder: string }>;
}

/** Who holds the Pebble LOCK of each database of a v2 data dir (a running v2 node holds them all). */
export async function sourceLocks(dir: string): Promise<SourceLocks> {
  const dbs = [...listShards(dir).shards, ...clusterDbDirs(dir)];
  const files = dbs.map((d) => join(d, 'LOCK')).filter((f) => existsSync(f));
  const holders = await lockHolders(files, readLockTable());
  return { checked: files.length, held: [...holders].map(([file, holder]) => ({ file, holder })) };
}

/** `db info`, with the LOCK check for a v2 data dir. */
export async function dbInfoWithLocks(dir: string): Promise<DbInfo> {
  const info = dbInfo(dir);
  if (info.kind === 'v2_data_dir') info.locks = await sourceLocks(dir);
  return info;
}

/**
 * The format major version named by the newest `marker.format-version.<iter>.<value>`
 * file (no marker: version 1, the pre-marker layout). Read from the names
 * only, so a version this reader cannot open is still reported.
 */
function formatVersion(dir: string): number {
  let best = -1;
  let value = 1;
  for (const f of readdirSync(dir)) {
    const m = /^marker\.format-version\.(\d+)\.(\d+)$/.exec(f);
    if (m && Number(m[1]) > best) {
      best = Number(m[1]);
      value = Number(m[2]);
    }
  }
  return value;
}

const read = <S extends TSchema>(schema: S, file: string): Static<S> | null => (existsSync(file) ? readJsonFile(schema, file) : null);

/** Identifies a directory without changing it. */
export function dbInfo(dir: string): DbInfo {
  if (!existsSync(dir)) return { kind: 'unknown', dir, reason: 'does not exist' };
  if (existsSync(join(dir, DATA_FORMAT_FILE)) || existsSync(join(dir, 'parley.db'))) {
    const format = read(DataFormat, join(dir, DATA_FORMAT_FILE));
    const marker = read(MigrationMarker, join(dir, MIGRATION_MARKER_FILE));
    return {
      kind: 'parley_data_dir',
      dir,
      data_format: format?.data_format ?? null,
      created_by: format?.created_by ?? null,
      migration: marker
        ? { node_id: marker.node_id, selection_digest: marker.selection_digest, imported_at: marker.imported_at, tool: marker.tool }
        : null,
      cluster: read(ClusterMeta, join(dir, CLUSTER_META_FILE)),
      started: read(StartedMarker, join(dir, STARTED_MARKER_FILE)),
      store: format?.store ?? marker?.store ?? { driver: 'sqlite' },
    };
  }
  const files = readdirSync(dir);
  if (files.some((f) => f.startsWith('MANIFEST-') || f.startsWith('marker.') || f === 'CURRENT')) {
    const v = formatVersion(dir);
    return { kind: 'pebble', dir, format_major_version: v, supported: v <= MAX_FORMAT_MAJOR_VERSION };
  }
  const { shards, problem } = listShards(dir);
  if (!problem) {
    return {
      kind: 'v2_data_dir',
      dir,
      shards: shards.map((s) => ({ shard: s.slice(s.lastIndexOf('/') + 1), format_major_version: formatVersion(s) })),
    };
  }
  return { kind: 'unknown', dir, reason: 'neither a Pebble database, a v2 data dir nor a Parley data dir' };
}
