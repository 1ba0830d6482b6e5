import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { Value } from '@sinclair/typebox/value';
import {
  DATA_FORMAT_FILE,
  DATA_FORMAT_VERSION,
  DataFormat,
  IMPORT_PARTIAL_FILE,
  MIGRATION_MARKER_FILE,
  MigrationMarker,
  STARTED_MARKER_FILE,
  StoreLocation,
  type StartedMarker,
} from '@parley/shared';
import { parsePostgresUrl } from '@parley/store/postgres-url';
import type { Config } from '../config/config.ts';
import { versionInfo } from '@parley/shared/version';

/** Why a data directory may not be started with this config. */
export class DataDirError extends Error {
  constructor(readonly problems: string[]) {
    super(`data directory refused:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'DataDirError';
  }
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new DataDirError([`${file}: ${(err as Error).message}`]);
  }
}

/** Config values an imported directory must be started with, compared one by one. */
function markerMismatches(marker: MigrationMarker, config: Config): string[] {
  const c = marker.cluster;
  const pairs: Array<[string, string | number, string | number]> = [
    ['node.id', marker.node_id, config.node.id],
    ['cluster.id', c.cluster_id, config.cluster.id],
    ['cluster.initial_slot_count', c.initial_slot_count, config.cluster.initialSlotCount],
    ['cluster.hash_slot_count', c.hash_slot_count, config.cluster.hashSlotCount],
    ['cluster.slot_replica_n', c.slot_replica_n, config.cluster.slotReplicaN],
    ['cluster.channel_replica_n', c.channel_replica_n, config.cluster.channelReplicaN],
  ];
  return pairs
    .filter(([, want, got]) => want !== got)
    .map(([key, want, got]) => `${key} is ${JSON.stringify(got)} but the migration marker requires ${JSON.stringify(want)}`);
}

/** Where the config puts the store (no credentials). */
export function configuredStore(config: Config): StoreLocation {
  if (config.store.driver === 'sqlite') return { driver: 'sqlite' };
  const { host, port, database, schema } = parsePostgresUrl(config.store.postgresUrl);
  return { driver: 'postgres', host, port, database, schema };
}

function describeStore(s: StoreLocation): string {
  return s.driver === 'sqlite' ? 'SQLite (parley.db in the data directory)' : `PostgreSQL database "${s.database}" schema "${s.schema}"`;
}

/**
 * A directory's store (from its data-format file or migration marker; absent =
 * SQLite) must be the one the config opens: the same driver, database and
 * schema (the host may change, e.g. after a failover). Otherwise the node would
 * silently start on an empty store.
 */
function storeMismatch(recorded: StoreLocation | undefined, config: Config, file: string): string | undefined {
  const want = recorded ?? { driver: 'sqlite' as const };
  const got = configuredStore(config);
  const same =
    want.driver === got.driver &&
    (want.driver === 'sqlite' || (got.driver === 'postgres' && want.database === got.database && want.schema === got.schema));
  return same ? undefined : `the config opens ${describeStore(got)} but ${file} says this directory's store is ${describeStore(want)}`;
}

/**
 * Refuses to open a store other than the one the directory records (its
 * data-format file or migration marker; an existing `parley.db` means SQLite),
 * before anything is opened or created.
 */
export function assertConfiguredStore(config: Config): void {
  const dir = config.node.dataDir;
  const problems: string[] = [];
  for (const name of [DATA_FORMAT_FILE, MIGRATION_MARKER_FILE]) {
    const file = join(dir, name);
    if (!existsSync(file)) continue;
    const doc = readJson(file) as { store?: unknown } | null;
    const recorded = doc && typeof doc === 'object' && Value.Check(StoreLocation, doc.store) ? doc.store : undefined;
    const mismatch = storeMismatch(recorded, config, file);
    if (mismatch) problems.push(mismatch);
  }
  if (problems.length === 0 && !existsSync(join(dir, DATA_FORMAT_FILE)) && existsSync(join(dir, 'parley.db'))) {
    const mismatch = storeMismatch(undefined, config, join(dir, 'parley.db'));
    if (mismatch) problems.push(mismatch);
  }
  if (problems.length > 0) throw new DataDirError(problems);
}

/**
 * Checks the data directory before the store opens. A new directory gets a
 * data-format file. A directory imported by `parleyctl` (it has a migration
 * marker) starts only when the config matches the marker; its first start is
 * recorded in `started.json`, after which import refuses to touch it.
 * Returns whether the directory is an imported one.
 */
export function prepareDataDir(config: Config): { imported: boolean; firstStart: boolean } {
  const dir = config.node.dataDir;
  // `parleyctl migrate import` builds a node beside its target (`.<name>.importing`) and renames it into place once
  // complete: a directory still holding its partial mark, or under that name, is an import that did not finish
  if (existsSync(join(dir, IMPORT_PARTIAL_FILE)) || /^\..+\.importing$/.test(basename(dir))) {
    throw new DataDirError([
      `${dir} is a parleyctl import that did not complete; run the same \`parleyctl migrate import\` command again and start the target it names`,
    ]);
  }
  const server = versionInfo();
  const tool = { name: server.name, version: server.version, commit: server.commit };
  const formatFile = join(dir, DATA_FORMAT_FILE);
  if (existsSync(formatFile)) {
    const format = readJson(formatFile);
    if (!Value.Check(DataFormat, format)) throw new DataDirError([`${formatFile} is not a data-format file`]);
    if (format.data_format > DATA_FORMAT_VERSION) {
      throw new DataDirError([`${dir} holds data format ${format.data_format}; this server reads up to ${DATA_FORMAT_VERSION}`]);
    }
    const mismatch = storeMismatch(format.store, config, formatFile);
    if (mismatch) throw new DataDirError([mismatch]);
  } else if (existsSync(join(dir, 'parley.db'))) {
    const mismatch = storeMismatch(undefined, config, join(dir, 'parley.db'));
    if (mismatch) throw new DataDirError([mismatch]);
  } else {
    mkdirSync(dir, { recursive: true });
    const store = configuredStore(config);
    const format: DataFormat = {
      data_format: DATA_FORMAT_VERSION,
      created_by: tool,
      created_at: new Date().toISOString(),
      ...(store.driver === 'postgres' ? { store } : {}),
    };
    writeFileSync(formatFile, `${JSON.stringify(format, null, 2)}\n`, { flag: 'wx' });
  }
  const markerFile = join(dir, MIGRATION_MARKER_FILE);
  if (!existsSync(markerFile)) return { imported: false, firstStart: false };
  const marker = readJson(markerFile);
  if (!Value.Check(MigrationMarker, marker)) throw new DataDirError([`${markerFile} is not a migration marker`]);
  const problems = markerMismatches(marker, config);
  const mismatch = storeMismatch(marker.store, config, markerFile);
  if (mismatch) problems.push(mismatch);
  if (problems.length > 0) throw new DataDirError(problems);
  const startedFile = join(dir, STARTED_MARKER_FILE);
  if (existsSync(startedFile)) return { imported: true, firstStart: false };
  const started: StartedMarker = { first_started_at: new Date().toISOString(), node_id: config.node.id, server: tool };
  writeFileSync(startedFile, `${JSON.stringify(started, null, 2)}\n`, { flag: 'wx' });
  return { imported: true, firstStart: true };
}
