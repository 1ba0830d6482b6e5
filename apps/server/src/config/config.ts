import process from 'node:process';
import { parsePostgresUrl } from '@parley/store/postgres-url';
import { accessProblems, describeKeys, parseApiKeys, readTlsPair, type ApiKey, type TlsFiles } from './api-access.ts';
import { clusterProblems, natsServersOf } from './cluster-values.ts';
import { parseDuration } from './duration.ts';
import { envName, OPTIONS, type ConfigValues, type OptionSpec } from './options.ts';
import { coerce, ConfigError, parseHostPort, readFile, typed, type HostPort } from './values.ts';

export { ConfigError, parseHostPort, type HostPort };

/** The effective configuration: every key with its checked, typed value. */
export interface Config {
  node: { id: number; name: string; dataDir: string };
  api: {
    listen: HostPort;
    externalTcpAddr: string;
    externalWsAddr: string;
    externalWssAddr: string;
    maxBodyBytes: number;
    /** `api.request_timeout`: longest one request may take to arrive (headers and body), ms. */
    requestTimeoutMs: number;
    /** Empty = no authentication (the API is then loopback-only unless explicitly allowed). */
    keys: ApiKey[];
    allowUnauthenticated: boolean;
    /** Origins allowed cross-origin; empty = CORS off. */
    corsOrigins: string[];
    /** Credential operations per minute per API key and per uid. */
    credentialRatePerKey: number;
    credentialRatePerUid: number;
    tls: TlsFiles | undefined;
  };
  gateway: {
    tls: TlsFiles | undefined;
    /** Connections that have not completed CONNECT, both gateways together. */
    maxPendingConnections: number;
    ws: HostPort;
    tcp: HostPort;
    tokenAuthOn: boolean;
    maxFrameBytes: number;
    authTimeoutMs: number;
    idleTimeoutMs: number;
    maxOutboundBytes: number;
  };
  message: { personWhitelistEnabled: boolean; systemDeviceId: string };
  /** RECV redelivery: first resend after `retryIntervalMs` (then doubling), at most `retryMaxCount` resends. */
  delivery: { retryIntervalMs: number; retryMaxCount: number; pendingAckMaxPerSession: number };
  store: {
    driver: ConfigValues['store']['driver'];
    sync: ConfigValues['store']['sync'];
    batchMaxRows: number;
    /** SQLite: whether the writer thread gathers a commit's WAL frames into one write (`auto` = when built and `sync` is full). */
    sqliteWalBuffer: ConfigValues['store']['sqlite_wal_buffer'];
    /** '' unless `driver` is postgres; holds the password (never log it). */
    postgresUrl: string;
    postgresPoolSize: number;
  };
  log: { level: ConfigValues['log']['level'] };
  cluster: {
    id: string;
    initialSlotCount: number;
    hashSlotCount: number;
    slotReplicaN: number;
    channelReplicaN: number;
    /** Cluster mode (`cluster.enabled`): PostgreSQL store, NATS bus, slot leases. */
    enabled: boolean;
    /** NATS servers (`cluster.nats_url`, split at commas; never logged: it may hold credentials). */
    natsServers: string[];
    slotLeaseTtlMs: number;
    nodeTimeoutMs: number;
    presenceTtlMs: number;
    forwardTimeoutMs: number;
  };
  observability: {
    debugApiEnable: boolean;
    metricsEnable: boolean;
    /** libuv threadpool size (`UV_THREADPOOL_SIZE`, default 4); reported as top `threads`. */
    uvThreadpoolSize: number;
  };
  top: { apiEnable: boolean; collectIntervalMs: number; historyWindowMs: number };
  bench: { apiEnable: boolean; apiToken: string; apiMaxBatchSize: number; apiMaxPayloadBytes: number };
  /** Webhook delivery (`webhook.*`): `httpAddr` '' = off; times in milliseconds. */
  webhook: {
    httpAddr: string;
    secret: string;
    /** Events to send; empty = all. */
    focusEvents: string[];
    queueSize: number;
    workers: number;
    msgNotifyBatchMaxItems: number;
    msgNotifyBatchMaxWaitMs: number;
    onlineStatusBatchMaxItems: number;
    onlineStatusBatchMaxWaitMs: number;
    offlineUidBatchSize: number;
    requestTimeoutMs: number;
    retryMaxAttempts: number;
  };
  /** The effective values by dotted key, for `/debug/config` and `config validate` (`api.keys` shown as names and scopes). */
  values: Record<string, string | number | boolean>;
}

/** The events `webhook.focus_events` may name. */
export const WEBHOOK_EVENTS = ['msg.notify', 'msg.offline', 'user.onlinestatus'] as const;

function splitList(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** Checks across `webhook.*` values that the per-key types cannot express. */
function webhookProblems(w: ConfigValues['webhook']): string[] {
  const problems: string[] = [];
  if (w.http_addr !== '' && (!/^https?:\/\//i.test(w.http_addr) || !URL.canParse(w.http_addr)))
    problems.push('webhook.http_addr must be an http:// or https:// URL');
  for (const name of splitList(w.focus_events)) {
    if (!(WEBHOOK_EVENTS as readonly string[]).includes(name))
      problems.push(`webhook.focus_events: unknown event "${name}" (known: ${WEBHOOK_EVENTS.join(', ')})`);
  }
  if (parseDuration(w.request_timeout) === 0) problems.push('webhook.request_timeout must be above zero');
  return problems;
}

/** `store.*` keys that only mean something together: each is carried out or refused. */
function storeProblems(s: ConfigValues['store']): string[] {
  if (s.driver === 'postgres') {
    if (s.sqlite_wal_buffer !== OPTIONS.get('store.sqlite_wal_buffer')!.default)
      return ['store.sqlite_wal_buffer is set but store.driver is "postgres": it applies to SQLite only'];
    if (s.postgres_url === '') return ['store.postgres_url is required when store.driver is "postgres"'];
    try {
      parsePostgresUrl(s.postgres_url);
    } catch (err) {
      return [(err as Error).message];
    }
    return [];
  }
  const problems: string[] = [];
  if (s.postgres_url !== '')
    problems.push('store.postgres_url is set but store.driver is "sqlite": set store.driver = "postgres" or remove it');
  const poolDefault = OPTIONS.get('store.postgres_pool_size')!.default;
  if (s.postgres_pool_size !== poolDefault)
    problems.push('store.postgres_pool_size is set but store.driver is "sqlite": it applies to PostgreSQL only');
  if (s.sqlite_wal_buffer === 'on' && s.sync !== 'full')
    problems.push(
      'store.sqlite_wal_buffer = "on" needs store.sync = "full": without a commit fsync there is no point to write the gathered WAL frames at',
    );
  return problems;
}

/** Env variables that are not config keys but are still ours (`bin/parley-node` reads two, @parley/protocol PARLEY_WKCRYPTO and PARLEY_READPUMP). */
const OTHER_ENV = new Set(['PARLEY_CONFIG', 'PARLEY_GC_THREADS', 'PARLEY_NODE_FLAGS', 'PARLEY_WKCRYPTO', 'PARLEY_READPUMP']);

/**
 * Loads the configuration from an optional TOML file and the environment.
 * Collects every problem (unknown keys, bad values) and throws one
 * `ConfigError` listing them all.
 */
export function loadConfig(file: string | undefined, env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  let rawKeys: { raw: unknown; fromEnv: boolean; where: string } | undefined;
  const values = new Map<string, unknown>();
  for (const [key, spec] of OPTIONS) values.set(key, spec.default);
  const take = (spec: OptionSpec, raw: unknown, fromEnv: boolean, where: string, name: string) => {
    if (spec.key === 'api.keys') {
      rawKeys = { raw, fromEnv, where };
      return;
    }
    const { value, problem } = coerce(spec, raw, fromEnv);
    if (problem) problems.push(`${where}: ${name} ${problem}`);
    else values.set(spec.key, value);
  };

  if (file !== undefined) {
    for (const [key, raw] of readFile(file)) {
      const spec = OPTIONS.get(key);
      if (spec) take(spec, raw, false, file, key);
      else problems.push(`${file}: unknown key "${key}"`);
    }
  }
  const byEnv = new Map([...OPTIONS.values()].map((spec) => [envName(spec.key), spec]));
  for (const [name, raw] of Object.entries(env)) {
    if (!name.startsWith('PARLEY_') || OTHER_ENV.has(name) || raw === undefined) continue;
    const spec = byEnv.get(name);
    if (spec) take(spec, raw, true, 'environment', name);
    else problems.push(`environment: unknown variable ${name}`);
  }

  const wkcrypto = env.PARLEY_WKCRYPTO;
  if (wkcrypto !== undefined && wkcrypto !== '' && wkcrypto !== 'native' && wkcrypto !== 'js') {
    problems.push(`environment: PARLEY_WKCRYPTO must be "native" or "js" (unset: native when built)`);
  }
  const readPump = env.PARLEY_READPUMP;
  if (readPump !== undefined && readPump !== '' && readPump !== 'on' && readPump !== 'off') {
    problems.push(`environment: PARLEY_READPUMP must be "on" or "off" (unset: on when built)`);
  }

  const parsedKeys = rawKeys ? parseApiKeys(rawKeys.raw, rawKeys.fromEnv) : { keys: [], problems: [] };
  values.set('api.keys', parsedKeys.keys);
  const v = typed(values);
  problems.push(...webhookProblems(v.webhook));
  if (parseDuration(v.api.request_timeout) === 0) problems.push('api.request_timeout must be above zero');
  problems.push(...storeProblems(v.store));
  problems.push(...clusterProblems(v));
  problems.push(...parsedKeys.problems.map((p) => `${rawKeys!.where}: ${p}`));
  const keys = v.api.keys;
  const listenAddr = v.api.listen_addr === '' ? (keys.length > 0 ? '0.0.0.0:5001' : '127.0.0.1:5001') : v.api.listen_addr;
  const listen = parseHostPort(listenAddr);
  const corsOrigins = splitList(v.api.cors_origins);
  if (listen) {
    problems.push(
      ...accessProblems({
        listenHost: listen.host,
        keys,
        allowUnauthenticated: v.api.allow_unauthenticated,
        debugApiEnable: v.observability.debug_api_enable,
        benchApiEnable: v.bench.api_enable,
        benchApiToken: v.bench.api_token,
        corsOrigins,
      }),
    );
  }
  const apiTls = readTlsPair('api', v.api.tls_cert, v.api.tls_key, problems);
  const gatewayTls = readTlsPair('gateway', v.gateway.tls_cert, v.gateway.tls_key, problems);
  if (problems.length > 0 || !listen) throw new ConfigError(problems);
  const name = v.node.name === '' ? `node-${v.node.id}` : v.node.name;
  // Durations were checked when read: each parses.
  const ms = (text: string) => parseDuration(text)!;
  return {
    node: { id: v.node.id, name, dataDir: v.node.data_dir },
    api: {
      listen,
      keys,
      allowUnauthenticated: v.api.allow_unauthenticated,
      corsOrigins,
      credentialRatePerKey: v.api.credential_rate_per_key,
      credentialRatePerUid: v.api.credential_rate_per_uid,
      tls: apiTls,
      externalTcpAddr: v.api.external_tcp_addr,
      externalWsAddr: v.api.external_ws_addr,
      externalWssAddr: v.api.external_wss_addr,
      maxBodyBytes: v.api.max_body_bytes,
      requestTimeoutMs: ms(v.api.request_timeout),
    },
    gateway: {
      tls: gatewayTls,
      maxPendingConnections: v.gateway.max_pending_connections,
      ws: parseHostPort(v.gateway.ws_addr)!,
      tcp: parseHostPort(v.gateway.tcp_addr)!,
      tokenAuthOn: v.gateway.token_auth_on,
      maxFrameBytes: v.gateway.max_frame_bytes,
      authTimeoutMs: ms(v.gateway.auth_timeout),
      idleTimeoutMs: ms(v.gateway.idle_timeout),
      maxOutboundBytes: v.gateway.max_outbound_bytes,
    },
    message: { personWhitelistEnabled: v.message.person_whitelist_enabled, systemDeviceId: v.message.system_device_id },
    delivery: {
      retryIntervalMs: Math.max(1, ms(v.delivery.retry_interval)),
      retryMaxCount: v.delivery.retry_max_count,
      pendingAckMaxPerSession: v.delivery.pending_ack_max_per_session,
    },
    store: {
      driver: v.store.driver,
      sync: v.store.sync,
      batchMaxRows: v.store.batch_max_rows,
      sqliteWalBuffer: v.store.sqlite_wal_buffer,
      postgresUrl: v.store.postgres_url,
      postgresPoolSize: v.store.postgres_pool_size,
    },
    log: { level: v.log.level },
    cluster: {
      id: v.cluster.id,
      initialSlotCount: v.cluster.initial_slot_count,
      hashSlotCount: v.cluster.hash_slot_count,
      slotReplicaN: v.cluster.slot_replica_n,
      channelReplicaN: v.cluster.channel_replica_n,
      enabled: v.cluster.enabled,
      natsServers: natsServersOf(v.cluster.nats_url),
      slotLeaseTtlMs: ms(v.cluster.slot_lease_ttl),
      nodeTimeoutMs: ms(v.cluster.node_timeout),
      presenceTtlMs: ms(v.cluster.presence_ttl),
      forwardTimeoutMs: ms(v.cluster.forward_timeout),
    },
    observability: {
      debugApiEnable: v.observability.debug_api_enable,
      metricsEnable: v.observability.metrics_enable,
      uvThreadpoolSize: Math.min(1024, Math.max(1, Number(env.UV_THREADPOOL_SIZE) || 4)),
    },
    top: {
      apiEnable: v.top.api_enable,
      collectIntervalMs: Math.max(10, ms(v.top.collect_interval)),
      historyWindowMs: ms(v.top.history_window),
    },
    bench: {
      apiEnable: v.bench.api_enable,
      apiToken: v.bench.api_token,
      apiMaxBatchSize: v.bench.api_max_batch_size,
      apiMaxPayloadBytes: v.bench.api_max_payload_bytes,
    },
    webhook: {
      httpAddr: v.webhook.http_addr,
      secret: v.webhook.secret,
      focusEvents: splitList(v.webhook.focus_events),
      queueSize: v.webhook.queue_size,
      workers: v.webhook.workers,
      msgNotifyBatchMaxItems: v.webhook.msg_notify_batch_max_items,
      msgNotifyBatchMaxWaitMs: ms(v.webhook.msg_notify_batch_max_wait),
      onlineStatusBatchMaxItems: v.webhook.online_status_batch_max_items,
      onlineStatusBatchMaxWaitMs: ms(v.webhook.online_status_batch_max_wait),
      offlineUidBatchSize: v.webhook.offline_uid_batch_size,
      requestTimeoutMs: ms(v.webhook.request_timeout),
      retryMaxAttempts: v.webhook.retry_max_attempts,
    },
    values: displayValues({ ...v, node: { ...v.node, name }, api: { ...v.api, listen_addr: listenAddr } }),
  };
}

/** The effective values by dotted key as `config validate` and `/debug/config` show them (`api.keys`: names and scopes only). */
function displayValues(v: ConfigValues): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [section, keys] of Object.entries(v)) {
    for (const [name, value] of Object.entries(keys)) {
      out[`${section}.${name}`] = Array.isArray(value) ? describeKeys(v.api.keys) : (value as string | number | boolean);
    }
  }
  return out;
}

/** The effective values with secrets replaced, for display. */
export function redactedValues(config: Config): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(config.values)) {
    out[key] = OPTIONS.get(key)?.secret && value !== '' ? '[redacted]' : value;
  }
  return out;
}
