import { Type, type Static } from '@sinclair/typebox';

/**
 * The migration plan file (`parleyctl migrate * --plan`), version 1. One schema
 * for the migrator and the console. Objects are closed: a member this release
 * does not know is rejected, as the seed requires of an older tool.
 */

const Sha256 = Type.String({ pattern: '^[0-9a-f]{64}$', description: 'lower-case hex SHA-256' });
const AbsPath = Type.String({ minLength: 1, pattern: '^/', description: 'absolute path on the migration machine' });
const closed = { additionalProperties: false } as const;

export const PlanSource = Type.Object(
  {
    node_id: Type.Integer({ minimum: 1, description: 'v2 node id' }),
    data_dir: AbsPath,
    shard_count: Type.Integer({ minimum: 1, maximum: 1000, description: 'business DB shards of the original deployment' }),
  },
  closed,
);

export const PlanTargetNode = Type.Object(
  {
    node_id: Type.Integer({ minimum: 1, maximum: 1023 }),
    addr: Type.String({ pattern: '^(\\[[0-9A-Fa-f:.]+\\]|[^\\s:\\[\\]]+):[0-9]{1,5}$', description: 'host:port, final cluster address' }),
    data_dir: AbsPath,
  },
  closed,
);

/**
 * Where a target's store is written. Absent: SQLite, one `parley.db` in each
 * node's `data_dir` (one node only). PostgreSQL: one store in the schema the
 * URL's `search_path` names (as the server's `store.postgres_url`), shared by
 * every target node; each `data_dir` then holds only the node's markers. The
 * schema must not exist yet or be empty.
 */
export const PlanTargetStore = Type.Object(
  {
    driver: Type.Literal('postgres'),
    postgres_url: Type.String({
      minLength: 1,
      description:
        'postgres://user[:password]@host:port/database?options=-c%20search_path%3D<schema>; the nodes start with it as store.postgres_url',
    }),
  },
  closed,
);

export const PlanTarget = Type.Object(
  {
    cluster_id: Type.String({ minLength: 1 }),
    created_at: Type.String({
      pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?(Z|[+-]\\d{2}:\\d{2})$',
      description: 'ISO 8601 date-time',
    }),
    slot_count: Type.Integer({ minimum: 1, maximum: 256, description: 'physical slots; default 12; always written' }),
    hash_slot_count: Type.Literal(256),
    replicas: Type.Integer({ minimum: 1 }),
    channel_replicas: Type.Integer({ minimum: 1 }),
    nodes: Type.Array(PlanTargetNode, { minItems: 1 }),
    store: Type.Optional(PlanTargetStore),
  },
  closed,
);

export const PlanMessages = Type.Object(
  {
    keep_latest_duplicates: Type.Optional(Type.Boolean()),
    exclude_cmd: Type.Optional(Type.Boolean()),
    exclude_streams: Type.Optional(Type.Boolean()),
    compact_sequences: Type.Optional(Type.Boolean()),
    resolve_duplicate_chains: Type.Optional(Type.Boolean()),
  },
  closed,
);

export const PlanMetadata = Type.Object(
  {
    conversation_list_limit: Type.Optional(Type.Integer({ minimum: 1 })),
    preserve_all_conversations: Type.Optional(Type.Boolean()),
    conversation_lookup: Type.Optional(Type.Literal('v2_active_slot')),
    conversation_recoveries: Type.Optional(
      Type.Array(
        Type.Object(
          {
            node_id: Type.Integer({ minimum: 1 }),
            logical_key: Type.String({ minLength: 1 }),
            indexed_sha256: Sha256,
            rows_sha256: Sha256,
          },
          closed,
        ),
      ),
    ),
    conversation_replicas: Type.Optional(
      Type.Array(
        Type.Object(
          {
            logical_key: Type.String({ minLength: 1 }),
            copies_sha256: Sha256,
            source_node_id: Type.Integer({ minimum: 0 }),
            archive_only: Type.Optional(Type.Boolean()),
          },
          closed,
        ),
      ),
    ),
    derive_unread_from_boundaries: Type.Optional(Type.Boolean()),
    missing_conversations: Type.Optional(
      Type.Array(
        Type.Object(
          {
            capture_digest: Sha256,
            uid_sha256: Sha256,
            channel_sha256: Sha256,
            retained_tail: Type.Integer({ minimum: 0 }),
            visibility: Type.Optional(Type.Literal('hidden_until_new_message')),
          },
          closed,
        ),
      ),
    ),
  },
  closed,
);

/**
 * Allowed `quarantine[].reason` values: the seed's three, and Parley's own
 * `message_id_clash` (a message whose id another channel's message also uses;
 * bound like the others, one physical row each, and requiring
 * `messages.compact_sequences`).
 */
export const QUARANTINE_REASONS = [
  'invalid_message_channel',
  'unresolved_allowlist_channel',
  'inconsistent_cmd_conversation',
  'message_id_clash',
] as const;

export const PlanQuarantine = Type.Object(
  {
    node_id: Type.Integer({ minimum: 1 }),
    shard: Type.Integer({ minimum: 0 }),
    key: Type.String({ minLength: 1, pattern: '^[A-Za-z0-9+/]*={0,2}$', description: 'Base64 original aggregate key' }),
    sha256: Sha256,
    reason: Type.Union(QUARANTINE_REASONS.map((r) => Type.Literal(r))),
  },
  closed,
);

export const PlanPluginArtifact = Type.Object(
  {
    node_id: Type.Integer({ minimum: 1 }),
    path: AbsPath,
    size: Type.Integer({ minimum: 0 }),
    sha256: Sha256,
    profile: Type.String({ minLength: 1 }),
    profile_sha256: Type.Optional(Sha256),
  },
  closed,
);

export const Plan = Type.Object(
  {
    version: Type.Literal(1),
    source_commit: Type.Optional(Type.String({ minLength: 1 })),
    sources: Type.Array(PlanSource, { minItems: 1 }),
    target: PlanTarget,
    plugin_nodes: Type.Optional(
      Type.Array(
        Type.Object({ target_node_id: Type.Integer({ minimum: 1, maximum: 1023 }), source_node_id: Type.Integer({ minimum: 1 }) }, closed),
      ),
    ),
    plugin_configs: Type.Optional(
      Type.Array(Type.Object({ plugin_no: Type.String({ minLength: 1 }), source_node_id: Type.Integer({ minimum: 1 }) }, closed)),
    ),
    plugin_artifacts: Type.Optional(Type.Array(PlanPluginArtifact)),
    messages: Type.Optional(PlanMessages),
    exclusions: Type.Optional(Type.Object({ legacy_stream_storage: Type.Optional(Type.Boolean()) }, closed)),
    metadata: Type.Optional(PlanMetadata),
    quarantine: Type.Optional(Type.Array(PlanQuarantine)),
  },
  closed,
);
export type Plan = Static<typeof Plan>;

/** The default physical slot count of a new target (`cluster.initial_slot_count`). */
export const DEFAULT_SLOT_COUNT = 12;
/** The fixed hash slot count. */
export const HASH_SLOT_COUNT = 256;
/** The only `source_commit` this release reads: WuKongIM tag v2.2.5-20260422. */
export const SUPPORTED_SOURCE_COMMIT = 'e3498a9dcdee908f621045eee971c5f5b960ee34';
export type PlanTargetNode = Static<typeof PlanTargetNode>;
export type PlanTargetStore = Static<typeof PlanTargetStore>;
