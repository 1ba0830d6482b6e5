/**
 * Every configuration key, declared once with its type, default and meaning.
 * Keys keep WuKongIM's dotted names; each is overridable by an environment
 * variable `PARLEY_` + the key upper-cased with dots as underscores.
 */
export type OptionType = 'string' | 'int' | 'bool' | 'addr' | 'duration' | 'enum' | 'keys';

export interface OptionSpec {
  type: OptionType;
  default: string | number | boolean;
  doc: string;
  min?: number;
  max?: number;
  values?: readonly string[];
  /** Redacted wherever the effective config is shown. */
  secret?: boolean;
}

export const OPTIONS = {
  'node.id': {
    type: 'int',
    default: 1,
    min: 1,
    max: 1023,
    doc: 'Node id, 1-1023; the Snowflake worker bits of every message id this node allocates.',
  },
  'node.name': { type: 'string', default: '', doc: 'Human-readable node name; defaults to `node-<id>`.' },
  'node.data_dir': { type: 'string', default: './data', doc: 'Data directory; the embedded store lives in `<data_dir>/parley.db`.' },
  'api.listen_addr': {
    type: 'addr',
    default: '',
    doc: 'HTTP API listener (host:port; port 0 = any free port). Empty = `127.0.0.1:5001` while no `api.keys` are configured, `0.0.0.0:5001` once they are. A non-loopback address without keys refuses to start unless `api.allow_unauthenticated` is true.',
  },
  'api.keys': {
    type: 'keys',
    default: '',
    doc: "API keys: a TOML array of tables `[[api.keys]]` with `name`, `secret` (at least 16 characters) and `scopes` (any of `tokens`, `send`, `channels`, `read`, `admin`; `admin` grants all); in the environment, the same list as JSON. A key is presented as `Authorization: Bearer <secret>` or, for WuKongIM v2 backends, as the `token` header of v2's `managerToken`. Empty = no authentication (loopback only, see `api.listen_addr`).",
  },
  'api.allow_unauthenticated': {
    type: 'bool',
    default: false,
    doc: 'Allow the API to listen on a non-loopback address with no `api.keys` (anyone who reaches it owns every account). For deployments behind a trusted private network only.',
  },
  'api.cors_origins': {
    type: 'string',
    default: '',
    doc: 'Comma-separated browser origins (`https://app.example.com`, or `*`) allowed to call the API cross-origin. Empty = CORS off: no Access-Control headers, preflights answered 403.',
  },
  'api.credential_rate_per_key': {
    type: 'int',
    default: 6000,
    min: 1,
    max: 10_000_000,
    doc: 'Credential operations (`/user/token`, `/user/device_quit`) one API key may make per minute (token bucket, burst = the same number); over it 429.',
  },
  'api.credential_rate_per_uid': {
    type: 'int',
    default: 60,
    min: 1,
    max: 1_000_000,
    doc: 'Credential operations on one uid per minute, whatever the key (token bucket, burst = the same number); over it 429.',
  },
  'api.tls_cert': {
    type: 'string',
    default: '',
    doc: 'PEM certificate (chain) file; with `api.tls_key` the API serves HTTPS only. Both or neither.',
  },
  'api.tls_key': { type: 'string', default: '', doc: 'PEM private key file of `api.tls_cert`.' },
  'api.external_tcp_addr': {
    type: 'string',
    default: '',
    doc: 'TCP address `/route` answers (host:port); derived from the TCP listener when empty.',
  },
  'api.external_ws_addr': {
    type: 'string',
    default: '',
    doc: 'WebSocket address `/route` answers (ws://host:port); derived from the WebSocket listener when empty.',
  },
  'api.external_wss_addr': {
    type: 'string',
    default: '',
    doc: 'WSS address `/route` answers when TLS is terminated by a proxy in front of the gateway.',
  },
  'api.max_body_bytes': {
    type: 'int',
    default: 1_048_576,
    min: 1024,
    max: 67_108_864,
    doc: 'Largest HTTP request body, in bytes; larger bodies get 413.',
  },
  'gateway.ws_addr': {
    type: 'addr',
    default: '0.0.0.0:5200',
    doc: 'WebSocket gateway listener (WKProto and JSON-RPC, told apart by the first frame).',
  },
  'gateway.tcp_addr': { type: 'addr', default: '0.0.0.0:5100', doc: 'TCP gateway listener (binary WKProto only).' },
  'gateway.token_auth_on': {
    type: 'bool',
    default: true,
    doc: 'Check uid + device_flag + token on CONNECT against the stored record. Off only for controlled migrations.',
  },
  'gateway.max_frame_bytes': {
    type: 'int',
    default: 1_048_576,
    min: 1024,
    max: 16_777_216,
    doc: 'Largest inbound WebSocket message, in bytes; a larger one closes the connection with code 1009.',
  },
  'gateway.auth_timeout': {
    type: 'duration',
    default: '10s',
    doc: 'A connection that has not completed CONNECT within this time is closed.',
  },
  'gateway.idle_timeout': {
    type: 'duration',
    default: '3m',
    doc: 'A connection that sends nothing for this long is closed (clients ping every 25-60 s).',
  },
  'gateway.tls_cert': {
    type: 'string',
    default: '',
    doc: 'PEM certificate (chain) file; with `gateway.tls_key` the WebSocket gateway accepts only `wss://` (TLS) and `/route` answers its `wss_addr`. Both or neither. The TCP gateway stays plain.',
  },
  'gateway.tls_key': { type: 'string', default: '', doc: 'PEM private key file of `gateway.tls_cert`.' },
  'gateway.max_pending_connections': {
    type: 'int',
    default: 4096,
    min: 1,
    max: 1_000_000,
    doc: 'Connections (both gateways together) that have not completed CONNECT yet; each may hold at most 16 KiB (the largest CONNECT that can succeed), so together at most this × 16 KiB. Over it, new connections are refused at once.',
  },
  'gateway.max_outbound_bytes': {
    type: 'int',
    default: 1_048_576,
    min: 65_536,
    max: 67_108_864,
    doc: 'Outbound bytes buffered for one slow connection before it is closed.',
  },
  'message.person_whitelist_enabled': {
    type: 'bool',
    default: false,
    doc: 'When true, a person message needs the sender in the receiver allowlist or the receiver allow_stranger flag.',
  },
  'message.system_device_id': {
    type: 'string',
    default: '____device',
    doc: 'Sessions and HTTP sends with this device_id are trusted senders (only the disband check applies).',
  },
  'webhook.http_addr': {
    type: 'string',
    default: '',
    doc: 'Webhook receiver URL (http or https); each event is POSTed to `<http_addr>?event=<name>`. Empty = webhooks off.',
  },
  'webhook.secret': {
    type: 'string',
    default: '',
    secret: true,
    doc: 'When non-empty, every webhook POST carries `X-Parley-Signature: sha256=<hex HMAC-SHA256 of the raw body under this secret>`.',
  },
  'webhook.focus_events': {
    type: 'string',
    default: '',
    doc: 'Comma-separated events to send (`msg.notify`, `msg.offline`, `user.onlinestatus`); empty = all.',
  },
  'webhook.queue_size': {
    type: 'int',
    default: 1024,
    min: 1,
    max: 1_000_000,
    doc: 'Webhook requests (batches, offline chunks) waiting for a worker; when full, new ones are dropped and counted, never waited for.',
  },
  'webhook.workers': {
    type: 'int',
    default: 16,
    min: 1,
    max: 1024,
    doc: 'Webhook requests in flight at once (each holds its worker through its retries).',
  },
  'webhook.msg_notify_batch_max_items': { type: 'int', default: 100, min: 1, max: 10_000, doc: 'Most messages in one `msg.notify` array.' },
  'webhook.msg_notify_batch_max_wait': {
    type: 'duration',
    default: '500ms',
    doc: 'Longest a committed message waits for its `msg.notify` batch to fill.',
  },
  'webhook.online_status_batch_max_items': {
    type: 'int',
    default: 512,
    min: 1,
    max: 10_000,
    doc: 'Most status strings in one `user.onlinestatus` array.',
  },
  'webhook.online_status_batch_max_wait': {
    type: 'duration',
    default: '2s',
    doc: 'Longest a presence change waits for its `user.onlinestatus` batch to fill.',
  },
  'webhook.offline_uid_batch_size': {
    type: 'int',
    default: 512,
    min: 1,
    max: 100_000,
    doc: 'Most recipient uids in one `msg.offline` request; a message with more offline recipients is split.',
  },
  'webhook.request_timeout': { type: 'duration', default: '5s', doc: 'Bound on one webhook attempt (connect, headers and body).' },
  'webhook.retry_max_attempts': {
    type: 'int',
    default: 3,
    min: 1,
    max: 20,
    doc: 'Total attempts per webhook request; between attempts the worker backs off 250 ms, 500 ms, 1 s, ... (doubling, capped at 10 s).',
  },
  'delivery.retry_interval': {
    type: 'duration',
    default: '60s',
    doc: 'A RECV not acknowledged this long after delivery is sent again to the same session (WuKongIM v2: `messageRetry.interval`); each later resend waits twice as long as the one before.',
  },
  'delivery.retry_max_count': {
    type: 'int',
    default: 5,
    min: 0,
    max: 100,
    doc: 'Resends of one unacknowledged RECV (WuKongIM v2: `messageRetry.maxCount`); a session that still has not acknowledged it after the last one is closed. 0 = never resend.',
  },
  'delivery.pending_ack_max_per_session': {
    type: 'int',
    default: 1024,
    min: 1,
    max: 1_000_000,
    doc: 'RECVs one session may hold unacknowledged; a delivery past it closes the session (the client does not ack), which then catches up by sync.',
  },
  'store.sync': {
    type: 'enum',
    default: 'full',
    values: ['full', 'normal'],
    doc: 'SQLite synchronous mode. `full` fsyncs every group commit, so an acknowledged message survives power loss; `normal` survives a process crash only.',
  },
  'store.batch_max_rows': {
    type: 'int',
    default: 512,
    min: 1,
    max: 10_000,
    doc: 'Most messages committed in one group-commit transaction.',
  },
  'observability.debug_api_enable': {
    type: 'bool',
    default: false,
    doc: 'Register the `/debug/*` routes (config, cluster, diagnostics, active handles, CPU profile, heap snapshot). Guarded by `bench.api_token` when set; on a non-loopback `api.listen_addr` the token is required.',
  },
  'observability.metrics_enable': { type: 'bool', default: true, doc: 'Serve `/metrics` in Prometheus text format on the API listener.' },
  'top.api_enable': { type: 'bool', default: true, doc: 'Run the node-local collector and answer `/top/v1/snapshot` (404 when false).' },
  'top.collect_interval': { type: 'duration', default: '1s', doc: 'How often the top collector samples counters and gauges.' },
  'top.history_window': {
    type: 'duration',
    default: '5m',
    doc: 'How much sample history the top collector keeps (its ring buffers hold history_window / collect_interval samples); the longest usable snapshot window.',
  },
  'bench.api_enable': {
    type: 'bool',
    default: false,
    doc: 'Register the `/bench/v1/*` routes (data preparation for load tests; not read-only).',
  },
  'bench.api_token': {
    type: 'string',
    default: '',
    secret: true,
    doc: 'When non-empty, `/bench/v1/*` and `/debug/*` require `Authorization: Bearer <token>`. Required when either group is enabled on a non-loopback `api.listen_addr`.',
  },
  'bench.api_max_batch_size': { type: 'int', default: 10_000, min: 1, max: 1_000_000, doc: 'Most top-level items in one bench mutation.' },
  'bench.api_max_payload_bytes': {
    type: 'int',
    default: 10_485_760,
    min: 1024,
    max: 268_435_456,
    doc: 'Largest bench mutation body, in bytes (larger bodies get 413).',
  },
  'cluster.id': {
    type: 'string',
    default: '',
    doc: 'Cluster id. A data dir imported by parleyctl only starts when this equals the id in its migration marker.',
  },
  'cluster.initial_slot_count': {
    type: 'int',
    default: 12,
    min: 1,
    max: 256,
    doc: 'Physical slot count of a new cluster (the migration plan default, 12); must equal the migration marker of an imported dir.',
  },
  'cluster.hash_slot_count': { type: 'int', default: 256, min: 256, max: 256, doc: 'Hash slots channels map to; fixed 256.' },
  'cluster.slot_replica_n': {
    type: 'int',
    default: 1,
    min: 1,
    max: 1023,
    doc: 'Nodes assigned to each slot (owner plus standbys); must equal the plan `replicas` of an imported dir.',
  },
  'cluster.channel_replica_n': {
    type: 'int',
    default: 1,
    min: 1,
    max: 1023,
    doc: 'Message replica count per channel; must equal the plan `channel_replicas` of an imported dir.',
  },
  'log.level': {
    type: 'enum',
    default: 'info',
    values: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
    doc: 'Log level (logs are JSON lines on stderr).',
  },
} as const satisfies Record<string, OptionSpec>;

export type OptionKey = keyof typeof OPTIONS;

/** The env variable overriding `key`: `api.listen_addr` → `PARLEY_API_LISTEN_ADDR`. */
export function envName(key: string): string {
  return `PARLEY_${key.toUpperCase().replace(/\./g, '_')}`;
}
