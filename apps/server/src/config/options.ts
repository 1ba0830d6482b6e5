import { KindGuard, Type, type Static, type TLiteral, type TSchema } from '@sinclair/typebox';
import { API_SCOPES } from './api-access.ts';

/**
 * Every configuration key, declared once: one TypeBox object whose sections
 * and keys are the TOML file's (WuKongIM's dotted names), each with its type,
 * default, bounds and meaning (units in the description). The loader checks a
 * file and the environment against it and types the result with `Static<>`.
 * Each key is overridable by an environment variable `PARLEY_` + the key
 * upper-cased with dots as underscores.
 */

/** How a string key is read: a Go-style duration, or a `host:port` listener address. */
type StringKind = 'duration' | 'addr';

const int = (def: number, minimum: number, maximum: number, description: string) =>
  Type.Integer({ default: def, minimum, maximum, description });
const bool = (def: boolean, description: string) => Type.Boolean({ default: def, description });
const str = (def: string, description: string) => Type.String({ default: def, description });
/** Redacted wherever the effective config is shown. */
const secret = (description: string) => Type.String({ default: '', description, secret: true });
const duration = (def: string, description: string) =>
  Type.String({ default: def, description: `${description} A duration: 500ms, 10s, 3m, 1h30m.`, kind: 'duration' satisfies StringKind });
const addr = (def: string, description: string) => Type.String({ default: def, description, kind: 'addr' satisfies StringKind });
/** One of the listed words. */
const oneOf = <T extends TLiteral<string>[]>(values: [...T], def: Static<T[number]>, description: string) =>
  Type.Union(values, { default: def, description });

/** One `[[api.keys]]` entry; the loader checks each field with its own message (`api-access.ts`). */
export const ApiKeyEntry = Type.Object(
  {
    name: Type.String({ description: '1-64 characters of A-Z a-z 0-9 . _ -' }),
    secret: Type.String({ description: 'at least 16 characters, no spaces' }),
    scopes: Type.Array(Type.Union(API_SCOPES.map((s) => Type.Literal(s)))),
  },
  { additionalProperties: false },
);
const apiKeys = (description: string) => Type.Array(ApiKeyEntry, { default: [], description });

export const ConfigSchema = Type.Object({
  node: Type.Object({
    id: int(1, 1, 1023, 'Node id, 1-1023; the Snowflake worker bits of every message id this node allocates.'),
    name: str('', 'Human-readable node name; defaults to `node-<id>`.'),
    data_dir: str(
      './data',
      'Data directory; the embedded store lives in `<data_dir>/parley.db` (with `store.driver = "postgres"`, only the directory\'s marker files).',
    ),
  }),
  api: Type.Object({
    listen_addr: addr(
      '',
      'HTTP API listener (host:port; port 0 = any free port). Empty = `127.0.0.1:5001` while no `api.keys` are configured, `0.0.0.0:5001` once they are. A non-loopback address without keys refuses to start unless `api.allow_unauthenticated` is true.',
    ),
    keys: apiKeys(
      "API keys: a TOML array of tables `[[api.keys]]` with `name`, `secret` (at least 16 characters) and `scopes` (any of `tokens`, `send`, `channels`, `read`, `admin`; `admin` grants all); in the environment, the same list as JSON. A key is presented as `Authorization: Bearer <secret>` or, for WuKongIM v2 backends, as the `token` header of v2's `managerToken`. Empty = no authentication (loopback only, see `api.listen_addr`).",
    ),
    allow_unauthenticated: bool(
      false,
      'Allow the API to listen on a non-loopback address with no `api.keys` (anyone who reaches it owns every account). For deployments behind a trusted private network only.',
    ),
    cors_origins: str(
      '',
      'Comma-separated browser origins (`https://app.example.com`, or `*`) allowed to call the API cross-origin. Empty = CORS off: no Access-Control headers, preflights answered 403.',
    ),
    credential_rate_per_key: int(
      6000,
      1,
      10000000,
      'Credential operations (`/user/token`, `/user/device_quit`) one API key may make per minute (token bucket, burst = the same number); over it 429.',
    ),
    credential_rate_per_uid: int(
      60,
      1,
      1000000,
      'Credential operations on one uid per minute, whatever the key (token bucket, burst = the same number); over it 429.',
    ),
    tls_cert: str('', 'PEM certificate (chain) file; with `api.tls_key` the API serves HTTPS only. Both or neither.'),
    tls_key: str('', 'PEM private key file of `api.tls_cert`.'),
    external_tcp_addr: str('', 'TCP address `/route` answers (host:port); derived from the TCP listener when empty.'),
    external_ws_addr: str('', 'WebSocket address `/route` answers (ws://host:port); derived from the WebSocket listener when empty.'),
    external_wss_addr: str('', 'WSS address `/route` answers when TLS is terminated by a proxy in front of the gateway.'),
    max_body_bytes: int(1048576, 1024, 67108864, 'Largest HTTP request body, in bytes; larger bodies get 413.'),
    request_timeout: duration(
      '30s',
      'Longest one HTTP request may take to arrive, headers and body; a slower one gets 408 and its connection is closed.',
    ),
  }),
  gateway: Type.Object({
    ws_addr: addr('0.0.0.0:5200', 'WebSocket gateway listener (WKProto and JSON-RPC, told apart by the first frame).'),
    tcp_addr: addr('0.0.0.0:5100', 'TCP gateway listener (binary WKProto only).'),
    token_auth_on: bool(true, 'Check uid + device_flag + token on CONNECT against the stored record. Off only for controlled migrations.'),
    max_frame_bytes: int(
      1048576,
      1024,
      16777216,
      'Largest inbound WebSocket message, in bytes; a larger one closes the connection with code 1009.',
    ),
    auth_timeout: duration('10s', 'A connection that has not completed CONNECT within this time is closed.'),
    idle_timeout: duration('3m', 'A connection that sends nothing for this long is closed (clients ping every 25-60 s).'),
    tls_cert: str(
      '',
      'PEM certificate (chain) file; with `gateway.tls_key` the WebSocket gateway accepts only `wss://` (TLS) and `/route` answers its `wss_addr`. Both or neither. The TCP gateway stays plain.',
    ),
    tls_key: str('', 'PEM private key file of `gateway.tls_cert`.'),
    max_pending_connections: int(
      4096,
      1,
      1000000,
      'Connections (both gateways together) that have not completed CONNECT yet; each may hold at most 16 KiB (the largest CONNECT that can succeed), so together at most this × 16 KiB. Over it, new connections are refused at once.',
    ),
    max_outbound_bytes: int(1048576, 65536, 67108864, 'Outbound bytes buffered for one slow connection before it is closed.'),
  }),
  message: Type.Object({
    person_whitelist_enabled: bool(
      false,
      'When true, a person message needs the sender in the receiver allowlist or the receiver allow_stranger flag.',
    ),
    system_device_id: str(
      '____device',
      'Sessions and HTTP sends with this device_id are trusted senders (only the disband check applies).',
    ),
  }),
  webhook: Type.Object({
    http_addr: str('', 'Webhook receiver URL (http or https); each event is POSTed to `<http_addr>?event=<name>`. Empty = webhooks off.'),
    secret: secret(
      'When non-empty, every webhook POST carries `X-Parley-Signature: sha256=<hex HMAC-SHA256 of the raw body under this secret>`.',
    ),
    focus_events: str('', 'Comma-separated events to send (`msg.notify`, `msg.offline`, `user.onlinestatus`); empty = all.'),
    queue_size: int(
      1024,
      1,
      1000000,
      'Webhook requests (batches, offline chunks) waiting for a worker; when full, new ones are dropped and counted, never waited for.',
    ),
    workers: int(16, 1, 1024, 'Webhook requests in flight at once (each holds its worker through its retries).'),
    msg_notify_batch_max_items: int(100, 1, 10000, 'Most messages in one `msg.notify` array.'),
    msg_notify_batch_max_wait: duration('500ms', 'Longest a committed message waits for its `msg.notify` batch to fill.'),
    online_status_batch_max_items: int(512, 1, 10000, 'Most status strings in one `user.onlinestatus` array.'),
    online_status_batch_max_wait: duration('2s', 'Longest a presence change waits for its `user.onlinestatus` batch to fill.'),
    offline_uid_batch_size: int(
      512,
      1,
      100000,
      'Most recipient uids in one `msg.offline` request; a message with more offline recipients is split.',
    ),
    request_timeout: duration('5s', 'Bound on one webhook attempt (connect, headers and body).'),
    retry_max_attempts: int(
      3,
      1,
      20,
      'Total attempts per webhook request; between attempts the worker backs off 250 ms, 500 ms, 1 s, ... (doubling, capped at 10 s).',
    ),
  }),
  delivery: Type.Object({
    retry_interval: duration(
      '60s',
      'A RECV not acknowledged this long after delivery is sent again to the same session (WuKongIM v2: `messageRetry.interval`); each later resend waits twice as long as the one before.',
    ),
    retry_max_count: int(
      5,
      0,
      100,
      'Resends of one unacknowledged RECV (WuKongIM v2: `messageRetry.maxCount`); a session that still has not acknowledged it after the last one is closed. 0 = never resend.',
    ),
    pending_ack_max_per_session: int(
      1024,
      1,
      1000000,
      'RECVs one session may hold unacknowledged; a delivery past it closes the session (the client does not ack), which then catches up by sync.',
    ),
  }),
  store: Type.Object({
    driver: oneOf(
      [Type.Literal('sqlite'), Type.Literal('postgres')],
      'sqlite',
      'Where messages and state are stored: `sqlite` = the embedded file `<data_dir>/parley.db` (one node); `postgres` = the PostgreSQL database and schema `store.postgres_url` names (needed by cluster mode; `node.data_dir` then keeps only the directory markers).',
    ),
    postgres_url: secret(
      'With `store.driver = "postgres"` (required then, refused otherwise): a standard connection string, `postgres://user:password@host:5432/database`. The tables live in the schema named by `search_path` in its `options` parameter, e.g. `?options=-c%20search_path%3Dparley` (URL-encoded `-c search_path=parley`; `public` when absent; a lower-case name, created if missing), so several clusters or test runs can share one database. Accepted parameters: options, sslmode, sslcert, sslkey, sslrootcert, application_name, connect_timeout.',
    ),
    postgres_pool_size: int(
      10,
      1,
      100,
      'With `store.driver = "postgres"`: most connections this node opens to PostgreSQL (plus one for its node lock). Refused with `sqlite` when not the default.',
    ),
    sync: oneOf(
      [Type.Literal('full'), Type.Literal('normal')],
      'full',
      'Commit durability. SQLite: `full` fsyncs every group commit, so an acknowledged message survives power loss; `normal` survives a process crash only. PostgreSQL: `full` waits for the server to flush each commit to its WAL (`synchronous_commit = on`, or whatever the server is set to); `normal` sets `synchronous_commit = off` (survives a Parley crash, not a database server crash).',
    ),
    batch_max_rows: int(512, 1, 10000, 'Most messages committed in one group-commit transaction.'),
    sqlite_wal_buffer: oneOf(
      [Type.Literal('auto'), Type.Literal('on'), Type.Literal('off')],
      'auto',
      "SQLite: the writer thread gathers each commit's WAL frames and writes them with one system call just before the commit's fsync, instead of SQLite's two per frame (the `@parley/sqlite-walbuf` extension, built by `npm ci`). `auto` = when the extension is built and `store.sync = \"full\"`; `on` = the same, refused at start when either is missing; `off` = SQLite's own writes. Refused with `postgres` when not the default.",
    ),
  }),
  observability: Type.Object({
    debug_api_enable: bool(
      false,
      'Register the `/debug/*` routes (config, cluster, diagnostics, active handles, CPU profile, heap snapshot). Guarded by `bench.api_token` when set; on a non-loopback `api.listen_addr` the token is required.',
    ),
    metrics_enable: bool(true, 'Serve `/metrics` in Prometheus text format on the API listener.'),
  }),
  top: Type.Object({
    api_enable: bool(true, 'Run the node-local collector and answer `/top/v1/snapshot` (404 when false).'),
    collect_interval: duration('1s', 'How often the top collector samples counters and gauges.'),
    history_window: duration(
      '5m',
      'How much sample history the top collector keeps (its ring buffers hold history_window / collect_interval samples); the longest usable snapshot window.',
    ),
  }),
  bench: Type.Object({
    api_enable: bool(false, 'Register the `/bench/v1/*` routes (data preparation for load tests; not read-only).'),
    api_token: secret(
      'When non-empty, `/bench/v1/*` and `/debug/*` require `Authorization: Bearer <token>`. Required when either group is enabled on a non-loopback `api.listen_addr`.',
    ),
    api_max_batch_size: int(10000, 1, 1000000, 'Most top-level items in one bench mutation.'),
    api_max_payload_bytes: int(10485760, 1024, 268435456, 'Largest bench mutation body, in bytes (larger bodies get 413).'),
  }),
  cluster: Type.Object({
    id: str('', 'Cluster id. A data dir imported by parleyctl only starts when this equals the id in its migration marker.'),
    initial_slot_count: int(
      12,
      1,
      256,
      'Physical slot count of a new cluster (the migration plan default, 12); must equal the migration marker of an imported dir.',
    ),
    hash_slot_count: int(256, 256, 256, 'Hash slots channels map to; fixed 256.'),
    slot_replica_n: int(
      1,
      1,
      1023,
      'Nodes assigned to each slot (owner plus standbys); must equal the plan `replicas` of an imported dir.',
    ),
    channel_replica_n: int(1, 1, 1023, 'Message replica count per channel; must equal the plan `channel_replicas` of an imported dir.'),
    enabled: bool(
      false,
      'Run as one node of a cluster: several nodes share one PostgreSQL store (`store.driver = "postgres"`) and talk over NATS (`cluster.nats_url`); needs a non-empty `cluster.id` and a `node.id` no other live node uses. False = a single node on its embedded SQLite file, no NATS.',
    ),
    nats_url: secret(
      'NATS server(s) the nodes talk over, comma-separated (`nats://host:4222`, `tls://host:4222`); subjects are prefixed with `parley.<cluster.id>.`, so several clusters can share one NATS. Empty = `nats://127.0.0.1:4222`. Only read when `cluster.enabled`.',
    ),
    slot_lease_ttl: duration(
      '6s',
      'How long a slot owner holds its lease in PostgreSQL without renewing it (it renews every third of this). After a node dies its slots are taken over once their leases run out, so this bounds the pause of sends to its slots. At least 2s.',
    ),
    node_timeout: duration(
      '3s',
      'A node whose heartbeat (sent every third of this over NATS) has not been heard for this long is treated as gone: its presence is dropped and its share of slots is rebalanced. At least 300ms.',
    ),
    presence_ttl: duration(
      '30s',
      "How long another node's report that a uid is online on it stays valid without being refreshed (each node re-announces its online uids every third of this).",
    ),
    forward_timeout: duration(
      '10s',
      'Longest a send waits for the owner of its slot (forwarding over NATS, and a failover in progress) before it is answered with a system error; the client then retries with the same client_msg_no.',
    ),
  }),
  log: Type.Object({
    level: oneOf(
      [
        Type.Literal('fatal'),
        Type.Literal('error'),
        Type.Literal('warn'),
        Type.Literal('info'),
        Type.Literal('debug'),
        Type.Literal('trace'),
        Type.Literal('silent'),
      ],
      'info',
      'Log level (logs are JSON lines on stderr).',
    ),
  }),
});
export type ConfigValues = Static<typeof ConfigSchema>;

/** One key's schema, found by its dotted name (`api.listen_addr`). */
export interface OptionSpec {
  key: string;
  section: string;
  name: string;
  schema: TSchema;
  default: unknown;
  /** Redacted wherever the effective config is shown. */
  secret: boolean;
}

/** Every key of `ConfigSchema` by its dotted name, in declaration order. */
export const OPTIONS: ReadonlyMap<string, OptionSpec> = new Map(
  Object.entries(ConfigSchema.properties).flatMap(([section, s]) =>
    Object.entries(KindGuard.IsObject(s) ? s.properties : {}).map(([name, schema]): [string, OptionSpec] => {
      const key = `${section}.${name}`;
      return [key, { key, section, name, schema, default: schema.default, secret: schema.secret === true }];
    }),
  ),
);

/** The env variable overriding `key`: `api.listen_addr` → `PARLEY_API_LISTEN_ADDR`. */
export function envName(key: string): string {
  return `PARLEY_${key.toUpperCase().replace(/\./g, '_')}`;
}
