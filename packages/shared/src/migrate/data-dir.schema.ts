import { Type, type Static } from '@sinclair/typebox';

/**
 * Files of a Parley data directory besides the store, shared by the server
 * (checks them at start) and `parleyctl` (writes them on import, reads them
 * in `db info` and verify).
 */

/** `<data_dir>/data-format.json`: which data format the directory holds and who created it. */
export const DATA_FORMAT_FILE = 'data-format.json';
/** `<data_dir>/migration.json`: the migration identity marker of an imported directory. */
export const MIGRATION_MARKER_FILE = 'migration.json';
/** `<data_dir>/cluster.json`: the cluster metadata an imported node starts with. */
export const CLUSTER_META_FILE = 'cluster.json';
/** `<data_dir>/started.json`: written by the server on the first start of an imported directory. */
export const STARTED_MARKER_FILE = 'started.json';
/**
 * `<dir>/.parley-import-partial`: written first into a directory `parleyctl
 * migrate import` is still building (beside the target, renamed into place
 * once complete). The server refuses to start a directory holding it.
 */
export const IMPORT_PARTIAL_FILE = '.parley-import-partial';
/** The data format this release reads and writes. */
export const DATA_FORMAT_VERSION = 1;

const Tool = Type.Object({ name: Type.String(), version: Type.String(), commit: Type.String() });

/**
 * Where a data directory's store lives: SQLite in the directory itself (also
 * what an absent `store` means), or a PostgreSQL schema (`store.postgres_url`;
 * the database and schema identify it, the host is only reported). Never a
 * user name or password.
 */
export const StoreLocation = Type.Union([
  Type.Object({ driver: Type.Literal('sqlite') }),
  Type.Object({
    driver: Type.Literal('postgres'),
    host: Type.String(),
    port: Type.Integer({ minimum: 1, maximum: 65535 }),
    database: Type.String({ minLength: 1 }),
    schema: Type.String({ minLength: 1 }),
  }),
]);
export type StoreLocation = Static<typeof StoreLocation>;

export const DataFormat = Type.Object({
  data_format: Type.Integer({ minimum: 1 }),
  created_by: Tool,
  created_at: Type.String(),
  /** Absent: SQLite (`<data_dir>/parley.db`). */
  store: Type.Optional(StoreLocation),
});
export type DataFormat = Static<typeof DataFormat>;

export const ClusterNode = Type.Object({ node_id: Type.Integer({ minimum: 1, maximum: 1023 }), addr: Type.String() });

export const ClusterMeta = Type.Object({
  cluster_id: Type.String({ minLength: 1 }),
  nodes: Type.Array(ClusterNode, { minItems: 1 }),
  /** `cluster.initial_slot_count`: physical slots. */
  initial_slot_count: Type.Integer({ minimum: 1 }),
  /** `cluster.hash_slot_count`: fixed 256. */
  hash_slot_count: Type.Integer({ minimum: 1 }),
  /** `cluster.slot_replica_n`. */
  slot_replica_n: Type.Integer({ minimum: 1 }),
  /** `cluster.channel_replica_n`. */
  channel_replica_n: Type.Integer({ minimum: 1 }),
  created_at: Type.String(),
});
export type ClusterMeta = Static<typeof ClusterMeta>;

export const MigrationMarker = Type.Object({
  identity: Type.Literal('parley-migration'),
  node_id: Type.Integer({ minimum: 1, maximum: 1023 }),
  cluster: ClusterMeta,
  plan_sha256: Type.String(),
  archive_manifest_sha256: Type.String(),
  selection_digest: Type.String(),
  /** SHA-256 over the store's rows in key order (see apps/migrator README). */
  content_sha256: Type.String(),
  /** Counts of what the import derived beyond copying rows (hidden memberships, command bindings, archived unread counts). */
  derived: Type.Optional(Type.Record(Type.String(), Type.Integer())),
  imported_at: Type.String(),
  tool: Tool,
  /** Where the import wrote the store; absent: SQLite in this directory. */
  store: Type.Optional(StoreLocation),
});
export type MigrationMarker = Static<typeof MigrationMarker>;

export const StartedMarker = Type.Object({
  first_started_at: Type.String(),
  node_id: Type.Integer(),
  server: Tool,
});
export type StartedMarker = Static<typeof StartedMarker>;
