import { Type, type Static, type TObject, type TProperties } from '@sinclair/typebox';

/** A closed object: the snapshot carries exactly the seed's members, nothing else. */
const Closed = <T extends TProperties>(properties: T, description?: string): TObject<T> =>
  Type.Object(properties, { additionalProperties: false, ...(description ? { description } : {}) });

const Num = (description?: string) => Type.Number(description ? { description } : {});
const Int = (description?: string) => Type.Integer(description ? { description } : {});
const IntMap = Type.Record(Type.String(), Type.Integer());
const NumMap = Type.Record(Type.String(), Type.Number());
/** RFC 3339 UTC timestamp. */
const Timestamp = Type.String({ description: 'RFC 3339 UTC timestamp' });

/** Values of `view`; each selects the sections listed in `TOP_VIEW_SECTIONS`. */
export const TOP_VIEWS = ['overview', 'runtime', 'traffic', 'channel', 'storage', 'delivery', 'all'] as const;
export type TopView = (typeof TOP_VIEWS)[number];

/** Sections present in every view. */
export const TOP_ALWAYS_SECTIONS = ['node', 'verdict', 'resources', 'alerts', 'sources'] as const;
/** Optional sections by view (http-api.md §5). */
export const TOP_VIEW_SECTIONS: Record<TopView, readonly string[]> = {
  overview: ['traffic', 'clients', 'pressure'],
  runtime: ['clients', 'pressure'],
  traffic: ['traffic'],
  channel: ['channelv2'],
  storage: ['storage'],
  delivery: ['delivery'],
  all: ['traffic', 'clients', 'pressure', 'channelv2', 'storage', 'delivery'],
};

/** Query of `GET /top/v1/snapshot`; values are checked by the route for the exact error texts. */
export const TopQuery = Type.Object({
  window: Type.Optional(Type.String({ description: 'Go duration, default 10s, minimum 2s' })),
  view: Type.Optional(Type.String({ description: `one of ${TOP_VIEWS.join(', ')}; default overview` })),
  limit: Type.Optional(Type.String({ description: 'integer >= 1, default 20, values above 100 clamp to 100' })),
});
export type TopQuery = Static<typeof TopQuery>;

export const TopNode = Closed({
  id: Int(),
  name: Type.String(),
  ready: Type.Boolean(),
  ready_parts: Type.Record(Type.String(), Type.Boolean(), { description: 'routes, slots, channels' }),
  state_revision: Type.Optional(Int('omitted when 0 (single node)')),
  controller_leader: Type.Optional(Int('omitted when 0 (single node)')),
  slot_count: Type.Optional(Int('omitted when 0 (single node)')),
  hash_slot_count: Type.Optional(Int('omitted when 0 (single node)')),
});

/** Verdict levels are an open string; Parley emits ok, busy, degraded, critical. */
export const TopVerdict = Closed({
  level: Type.String(),
  summary: Type.String(),
  reasons: Type.Optional(Type.Array(Type.String())),
});

export const TopTraffic = Closed({
  send_per_sec: Num('sends received (gateway and HTTP) per second'),
  sendack_per_sec: Num('sends answered with reason success per second'),
  sendack_error_per_sec: Num('sends answered with any other reason, or failed, per second'),
  sendack_error_rate: Num('sendack errors / (acks + errors) over the window, 0..1'),
  append_per_sec: Num('rows committed to the store per second'),
  append_p50_ms: Num('enqueue-to-durable wait of appended messages, median, ms'),
  append_p99_ms: Num('enqueue-to-durable wait of appended messages, 99th percentile, ms'),
  deliver_per_sec: Num('RECVs handed to online sessions per second'),
  fanout_rate: Num('deliveries per fanned-out message over the window'),
});

export const TopClients = Closed({
  connections: Int('live gateway connections'),
  connections_by_protocol: Type.Optional(IntMap),
  auth_fail_per_sec: Num(),
  close_per_sec: Num(),
});

export const TopResources = Closed({
  cpu_percent: Num('process CPU (user + system) over the window, percent of one core'),
  memory_rss_bytes: Num(),
  memory_vms_bytes: Num('virtual size from /proc/self/status VmSize; 0 where unavailable'),
  goroutines: Num('Node.js: active libuv handles and requests (process.getActiveResourcesInfo)'),
  threads: Num('Node.js: libuv threadpool size (UV_THREADPOOL_SIZE, default 4)'),
});

/** Severities are an open string; Parley emits warn, error, critical. */
export const TopAlert = Closed({
  id: Type.String(),
  fingerprint: Type.Optional(Type.String({ description: 'component|kind|message' })),
  node_id: Type.Optional(Int()),
  node_name: Type.Optional(Type.String()),
  severity: Type.String(),
  component: Type.String(),
  kind: Type.String({ description: 'ready_part_down, sendack_error_rate_high, session_error, pressure_high' }),
  message: Type.String(),
  hint: Type.Optional(Type.String()),
  evidence: Type.Optional(Type.Record(Type.String(), Type.String())),
  first_seen: Timestamp,
  last_seen: Timestamp,
  resolved_at: Type.Optional(Timestamp),
  count: Int('collector ticks on which the condition held'),
  active: Type.Boolean(),
});
export type TopAlert = Static<typeof TopAlert>;

export const TopAlerts = Closed({
  counts: Closed({ active: Int(), recent: Int(), warning: Int(), error: Int(), critical: Int() }),
  active: Type.Optional(Type.Array(TopAlert)),
  recent: Type.Optional(Type.Array(TopAlert)),
});

export const TopPressureItem = Closed({
  component: Type.String(),
  pool: Type.Optional(Type.String()),
  queue: Type.Optional(Type.String()),
  priority: Type.Optional(Type.String()),
  level: Type.String(),
  score: Num('max(depth/capacity, inflight/workers)'),
  depth: Type.Optional(Num()),
  capacity: Type.Optional(Num()),
  inflight: Type.Optional(Num()),
  workers: Type.Optional(Num()),
  wait_p99_ms: Type.Optional(Num()),
  task_p99_ms: Type.Optional(Num()),
  admission_error_per_sec: Type.Optional(Num()),
  hint: Type.Optional(Type.String()),
});
export type TopPressureItem = Static<typeof TopPressureItem>;

export const TopPressure = Closed({
  overall_level: Type.String(),
  component_scores: Type.Optional(NumMap),
  top: Type.Optional(Type.Array(TopPressureItem)),
});

export const TopChannelV2 = Closed(
  {
    active_total: Int(),
    active_leader: Int(),
    active_follower: Int(),
    follower_parked: Int(),
    reactor_mailbox_depth_max: Int('Parley: append queue depth'),
    reactor_mailbox_capacity_max: Int('Parley: append queue capacity'),
    worker_queue_depth_by_pool: Type.Optional(IntMap),
    worker_queue_capacity_by_pool: Type.Optional(IntMap),
    worker_inflight_by_pool: Type.Optional(IntMap),
    worker_capacity_by_pool: Type.Optional(IntMap),
    append_p99_ms: Num(),
    hot_stage: Type.Optional(Type.String()),
    stage_p99_ms: Type.Optional(NumMap),
  },
  'Channel runtime (JSON name kept as channelv2). Parley sequences every channel on this node: active = channels with a cached tail, all leaders.',
);

export const TopCommitQueue = Closed({
  store: Type.String(),
  depth: Num(),
  capacity: Num(),
  request_p99_ms_by_lane: Type.Optional(NumMap),
  batch_records_p50: Num(),
  batch_commit_p99_ms: Num(),
});

export const TopStorage = Closed({ commit_queues: Type.Optional(Type.Array(TopCommitQueue)) });

export const TopDelivery = Closed({
  push_per_sec: Num(),
  routes_per_sec: Num('messages fanned out per second'),
  push_p99_ms: Num(),
  retry_queue_depth: Num('Parley: webhook requests being retried'),
  ack_bindings: Num('RECVs delivered and not yet acknowledged'),
  recipient_queue_depth: Num('largest per-session outbound buffer, bytes'),
  recipient_queue_capacity: Num('gateway.max_outbound_bytes'),
  error_rate: Num('failed fan-outs / fanned-out messages'),
});

const SourceState = Closed({
  available: Type.Boolean(),
  sample_count: Type.Optional(Int()),
  warming_up: Type.Optional(Type.Boolean()),
});

export const TopSources = Closed({
  collector: SourceState,
  cluster_snapshot: SourceState,
  metrics: Closed({ enabled: Type.Boolean(), required: Type.Boolean() }),
  notes: Type.Optional(Type.Array(Type.String())),
});

/** `GET /top/v1/snapshot`: node-local, read-only; sections depend on `view`. */
export const TopSnapshot = Closed({
  version: Type.Literal('top/v1'),
  scope: Type.Literal('local_node'),
  generated_at: Timestamp,
  window_seconds: Int('actual span of the samples used'),
  node: TopNode,
  verdict: TopVerdict,
  resources: TopResources,
  alerts: TopAlerts,
  sources: TopSources,
  traffic: Type.Optional(TopTraffic),
  clients: Type.Optional(TopClients),
  pressure: Type.Optional(TopPressure),
  channelv2: Type.Optional(TopChannelV2),
  storage: Type.Optional(TopStorage),
  delivery: Type.Optional(TopDelivery),
});
export type TopSnapshot = Static<typeof TopSnapshot>;
export type TopTraffic = Static<typeof TopTraffic>;
export type TopClients = Static<typeof TopClients>;
export type TopResources = Static<typeof TopResources>;
export type TopPressure = Static<typeof TopPressure>;
export type TopChannelV2 = Static<typeof TopChannelV2>;
export type TopStorage = Static<typeof TopStorage>;
export type TopDelivery = Static<typeof TopDelivery>;
export type TopNode = Static<typeof TopNode>;
export type TopVerdict = Static<typeof TopVerdict>;
export type TopAlerts = Static<typeof TopAlerts>;
export type TopSources = Static<typeof TopSources>;
