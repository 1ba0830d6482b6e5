import { Type, type Static } from '@sinclair/typebox';

const Opt = Type.Optional;
const Str = Type.String;
const Int = Type.Integer;
const ConfigValue = Type.Union([Type.String(), Type.Number(), Type.Boolean()]);

/** `GET /debug/config`: WuKongIM's summary fields plus every effective key (secrets as `[redacted]`). */
export const DebugConfig = Type.Object({
  node_id: Int(),
  node_name: Str(),
  node_data_dir: Str(),
  cluster_listen: Str(),
  api_listen: Str(),
  gateway_listeners: Int(),
  metrics_enable: Type.Boolean(),
  debug_api_enable: Type.Boolean(),
  diagnostics_enable: Type.Boolean(),
  initial_slot_count: Int(),
  hash_slot_count: Int(),
  slot_replica_count: Int(),
  channel_replica_count: Int(),
  channel_max_loaded_count: Int(),
  values: Type.Record(Type.String(), ConfigValue),
});
export type DebugConfig = Static<typeof DebugConfig>;

/** One node of a cluster as `/debug/cluster` lists it (live = heard within `cluster.node_timeout`). */
export const DebugClusterNode = Type.Object({
  node_id: Int(),
  name: Str(),
  api_addr: Str({ description: 'host:port of its HTTP API as the node reports it' }),
  live: Type.Boolean(),
  slots: Type.Array(Int(), { description: 'physical slots it holds' }),
});
export type DebugClusterNode = Static<typeof DebugClusterNode>;

/**
 * `GET /debug/cluster`: the slot map. A single node has no slots to report;
 * in cluster mode every physical slot with its owner (`leader_id`, 0 = none
 * live), lease epoch and time to expiry, and its hash-slot range, plus the
 * live nodes.
 */
export const DebugCluster = Type.Object({
  node_id: Int(),
  state_revision: Int({ description: 'grows with every change of slot ownership (the sum of lease epochs)' }),
  cluster_id: Opt(Str()),
  controller_leader: Opt(
    Int({ description: 'the lowest live node id (leases in PostgreSQL decide ownership; there is no controller process)' }),
  ),
  slot_count: Opt(Int()),
  hash_slot_count: Opt(Int()),
  slot_map_current: Opt(Type.Boolean({ description: 'the slot map was read from the store within one lease TTL' })),
  bus_connected: Opt(Type.Boolean()),
  nodes: Opt(Type.Array(DebugClusterNode)),
  remote_presence: Opt(Type.Record(Type.String(), Int(), { description: 'uids online on each other node, by node id' })),
  router: Opt(
    Type.Record(Type.String(), Int(), { description: 'sends forwarded, served for others, retried, refused for want of an owner' }),
  ),
  slots: Type.Array(
    Type.Object(
      {
        slot_id: Int(),
        leader_id: Int(),
        replicas: Type.Array(Int()),
        epoch: Opt(Int()),
        expires_in_ms: Opt(Int()),
        hash_slots: Opt(Type.Object({ from: Int(), to: Int() })),
      },
      { additionalProperties: true },
    ),
  ),
});
export type DebugCluster = Static<typeof DebugCluster>;

/** `GET /debug/diagnostics/trace/:trace_id` path. */
export const DiagnosticsTraceParams = Type.Object({ trace_id: Type.String() });

/** `/debug/pprof/*` query: `seconds` of a CPU profile (1-60, default 30). */
export const PprofQuery = Type.Object({ seconds: Type.Optional(Type.String()) });
export type PprofQuery = Static<typeof PprofQuery>;

/** Values of a diagnostics event's `result`. */
export const DIAGNOSTIC_RESULTS = ['ok', 'error', 'timeout', 'canceled', 'partial', 'dropped', 'skipped'] as const;

/** One recorded stage of a message's path (`from_uid` is never recorded). */
export const DiagnosticEvent = Type.Object({
  trace_id: Opt(Str()),
  span_id: Opt(Str()),
  stage: Str({ description: 'append (one message, enqueue to durable) or commit (one group-commit batch)' }),
  at: Str({ description: 'RFC 3339' }),
  duration: Opt(Int({ description: 'nanoseconds' })),
  node_id: Opt(Int()),
  channel_key: Opt(Str({ description: '<channel_type>&<channel_id>' })),
  client_msg_no: Opt(Str()),
  message_seq: Opt(Int()),
  result: Str(),
  error_code: Opt(Str()),
  error: Opt(Str()),
  record_count: Opt(Int()),
  byte_count: Opt(Int()),
  queue_depth: Opt(Int()),
});
export type DiagnosticEvent = Static<typeof DiagnosticEvent>;

/** Body of the three `/debug/diagnostics/*` routes. */
export const DiagnosticsResult = Type.Object({
  scope: Str(),
  node_id: Int(),
  trace_id: Opt(Str()),
  client_msg_no: Opt(Str()),
  channel_key: Opt(Str()),
  uid: Opt(Str()),
  message_seq: Opt(Int()),
  query: Type.Record(Type.String(), ConfigValue),
  status: Str({ description: 'ok, error, partial or not_found' }),
  started_at: Opt(Str()),
  duration_ms: Opt(Type.Number()),
  summary: Type.Object({
    slowest_stage: Opt(Str()),
    slowest_duration_ms: Opt(Type.Number()),
    error_stage: Opt(Str()),
    error_code: Opt(Str()),
  }),
  events: Type.Array(DiagnosticEvent),
  notes: Opt(Type.Array(Str())),
});
export type DiagnosticsResult = Static<typeof DiagnosticsResult>;

export const DiagnosticsQuery = Type.Object({
  limit: Opt(Str()),
  client_msg_no: Opt(Str()),
  channel_key: Opt(Str()),
  message_seq: Opt(Str()),
  stage: Opt(Str()),
  uid: Opt(Str()),
  result: Opt(Str()),
});
export type DiagnosticsQuery = Static<typeof DiagnosticsQuery>;

/** `GET /debug/goroutines/summary`, Node.js edition: modules are libuv resource types. */
export const GoroutineSummary = Type.Object({
  generated_at: Str(),
  process_started_at: Str(),
  boot_id: Str(),
  process_total: Int({ description: 'active libuv handles and requests' }),
  managed_total: Int(),
  unmanaged_total: Int(),
  reconciled: Type.Boolean(),
  total_active: Int(),
  total_started: Int(),
  total_panics: Int(),
  modules: Type.Array(
    Type.Object({
      module: Str(),
      active: Int(),
      process_peak: Int(),
      total_started: Int(),
      total_stopped: Int(),
      panics: Int(),
      tasks: Type.Array(Type.Unknown()),
    }),
  ),
});
export type GoroutineSummary = Static<typeof GoroutineSummary>;
