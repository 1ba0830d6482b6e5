import { readFileSync } from 'node:fs';
import { parse as parseToml } from 'smol-toml';
import { accessProblems, describeKeys, parseApiKeys, readTlsPair, type ApiKey, type TlsFiles } from './api-access.ts';
import { parseDuration } from './duration.ts';
import { envName, OPTIONS, type OptionKey, type OptionSpec } from './options.ts';

/** A listener address split into host and port (port 0 = any free port). */
export interface HostPort {
  host: string;
  port: number;
}

/** The effective configuration: every key with its checked, typed value. */
export interface Config {
  node: { id: number; name: string; dataDir: string };
  api: {
    listen: HostPort;
    externalTcpAddr: string;
    externalWsAddr: string;
    externalWssAddr: string;
    maxBodyBytes: number;
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
  store: { sync: 'full' | 'normal'; batchMaxRows: number };
  log: { level: string };
  cluster: { id: string; initialSlotCount: number; hashSlotCount: number; slotReplicaN: number; channelReplicaN: number };
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
  /** The raw dotted values, for `/debug/config` and `config validate`. */
  values: Record<OptionKey, string | number | boolean>;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
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
function webhookProblems(values: Map<string, string | number | boolean>): string[] {
  const problems: string[] = [];
  const addr = values.get('webhook.http_addr') as string;
  if (addr !== '' && (!/^https?:\/\//i.test(addr) || !URL.canParse(addr)))
    problems.push('webhook.http_addr must be an http:// or https:// URL');
  for (const name of splitList(values.get('webhook.focus_events') as string)) {
    if (!(WEBHOOK_EVENTS as readonly string[]).includes(name))
      problems.push(`webhook.focus_events: unknown event "${name}" (known: ${WEBHOOK_EVENTS.join(', ')})`);
  }
  if (parseDuration(values.get('webhook.request_timeout') as string) === 0) problems.push('webhook.request_timeout must be above zero');
  return problems;
}

/** Env variables that are not config keys but are still ours. */
const OTHER_ENV = new Set(['PARLEY_CONFIG']);

function flatten(value: unknown, prefix: string, out: Map<string, unknown>): void {
  if (typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date)) {
    for (const [k, v] of Object.entries(value)) flatten(v, prefix ? `${prefix}.${k}` : k, out);
  } else {
    out.set(prefix, value);
  }
}

export function parseHostPort(text: string): HostPort | undefined {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:\s]*):(\d{1,5})$/.exec(text);
  if (!m) return undefined;
  const port = Number(m[2]);
  if (port > 65535) return undefined;
  const host = m[1]!.replace(/^\[|\]$/g, '');
  return { host: host === '' ? '0.0.0.0' : host, port };
}

/** Why `text` is not a listener address, for the error message. */
function addrProblem(text: string): string {
  const port = /:(\d+)$/.exec(text)?.[1];
  if (port !== undefined && Number(port) > 65535) return `port ${port} is out of range (0-65535)`;
  return 'must be host:port (port 0-65535; [::1]:port for IPv6)';
}

function coerce(spec: OptionSpec, raw: unknown, fromEnv: boolean): { value?: string | number | boolean; problem?: string } {
  switch (spec.type) {
    case 'bool': {
      if (typeof raw === 'boolean') return { value: raw };
      if (fromEnv && typeof raw === 'string' && /^(true|false|1|0)$/.test(raw)) return { value: raw === 'true' || raw === '1' };
      return { problem: 'must be a boolean' };
    }
    case 'int': {
      const n = typeof raw === 'number' ? raw : fromEnv && typeof raw === 'string' && /^-?\d+$/.test(raw) ? Number(raw) : NaN;
      if (!Number.isSafeInteger(n)) return { problem: 'must be an integer' };
      if ((spec.min !== undefined && n < spec.min) || (spec.max !== undefined && n > spec.max)) {
        return { problem: `must be between ${spec.min} and ${spec.max}` };
      }
      return { value: n };
    }
    case 'duration': {
      if (typeof raw !== 'string' || parseDuration(raw) === undefined)
        return { problem: 'must be a duration such as "500ms", "10s" or "3m"' };
      return { value: raw };
    }
    case 'addr': {
      if (typeof raw === 'string' && raw === '' && spec.default === '') return { value: raw };
      if (typeof raw !== 'string') return { problem: 'must be a "host:port" string' };
      if (!parseHostPort(raw)) return { problem: addrProblem(raw) };
      return { value: raw };
    }
    case 'enum': {
      if (typeof raw !== 'string' || !spec.values?.includes(raw)) return { problem: `must be one of ${spec.values?.join(', ')}` };
      return { value: raw };
    }
    default:
      return typeof raw === 'string' ? { value: raw } : { problem: 'must be a string' };
  }
}

/**
 * Loads the configuration from an optional TOML file and the environment.
 * Collects every problem (unknown keys, bad values) and throws one
 * `ConfigError` listing them all.
 */
export function loadConfig(file: string | undefined, env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  let rawKeys: { raw: unknown; fromEnv: boolean; where: string } | undefined;
  const values = new Map<string, string | number | boolean>();
  for (const [key, spec] of Object.entries(OPTIONS)) values.set(key, spec.default);

  if (file !== undefined) {
    let tree: unknown;
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new ConfigError([`${file}: ${(err as Error).message}`]);
    }
    try {
      tree = parseToml(text);
    } catch (err) {
      const e = err as Error & { line?: number; column?: number };
      const at = e.line !== undefined ? `:${e.line}:${e.column ?? 0}` : '';
      throw new ConfigError([`${file}${at}: ${e.message.split('\n')[0]}`]);
    }
    const flat = new Map<string, unknown>();
    flatten(tree, '', flat);
    for (const [key, raw] of flat) {
      const spec = (OPTIONS as Record<string, OptionSpec>)[key];
      if (!spec) {
        problems.push(`${file}: unknown key "${key}"`);
        continue;
      }
      if (spec.type === 'keys') {
        rawKeys = { raw, fromEnv: false, where: file };
        continue;
      }
      const { value, problem } = coerce(spec, raw, false);
      if (problem) problems.push(`${file}: ${key} ${problem}`);
      else values.set(key, value!);
    }
  }

  const byEnv = new Map(Object.keys(OPTIONS).map((k) => [envName(k), k]));
  for (const [name, raw] of Object.entries(env)) {
    if (!name.startsWith('PARLEY_') || OTHER_ENV.has(name) || raw === undefined) continue;
    const key = byEnv.get(name);
    if (!key) {
      problems.push(`environment: unknown variable ${name}`);
      continue;
    }
    if (OPTIONS[key as OptionKey].type === 'keys') {
      rawKeys = { raw, fromEnv: true, where: 'environment' };
      continue;
    }
    const { value, problem } = coerce((OPTIONS as Record<string, OptionSpec>)[key]!, raw, true);
    if (problem) problems.push(`environment: ${name} ${problem}`);
    else values.set(key, value!);
  }

  problems.push(...webhookProblems(values));
  const parsedKeys = rawKeys ? parseApiKeys(rawKeys.raw, rawKeys.fromEnv) : { keys: [], problems: [] };
  problems.push(...parsedKeys.problems.map((p) => `${rawKeys!.where}: ${p}`));
  const keys = parsedKeys.keys;
  const v = (key: OptionKey) => values.get(key)!;
  if (v('api.listen_addr') === '') values.set('api.listen_addr', keys.length > 0 ? '0.0.0.0:5001' : '127.0.0.1:5001');
  values.set('api.keys', describeKeys(keys));
  const listen = parseHostPort(v('api.listen_addr') as string);
  const corsOrigins = splitList(v('api.cors_origins') as string);
  if (listen) {
    problems.push(
      ...accessProblems({
        listenHost: listen.host,
        keys,
        allowUnauthenticated: v('api.allow_unauthenticated') as boolean,
        debugApiEnable: v('observability.debug_api_enable') as boolean,
        benchApiEnable: v('bench.api_enable') as boolean,
        benchApiToken: v('bench.api_token') as string,
        corsOrigins,
      }),
    );
  }
  const apiTls = readTlsPair('api', v('api.tls_cert') as string, v('api.tls_key') as string, problems);
  const gatewayTls = readTlsPair('gateway', v('gateway.tls_cert') as string, v('gateway.tls_key') as string, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  const id = v('node.id') as number;
  if (v('node.name') === '') values.set('node.name', `node-${id}`);
  return {
    node: { id, name: v('node.name') as string, dataDir: v('node.data_dir') as string },
    api: {
      listen: listen!,
      keys,
      allowUnauthenticated: v('api.allow_unauthenticated') as boolean,
      corsOrigins,
      credentialRatePerKey: v('api.credential_rate_per_key') as number,
      credentialRatePerUid: v('api.credential_rate_per_uid') as number,
      tls: apiTls,
      externalTcpAddr: v('api.external_tcp_addr') as string,
      externalWsAddr: v('api.external_ws_addr') as string,
      externalWssAddr: v('api.external_wss_addr') as string,
      maxBodyBytes: v('api.max_body_bytes') as number,
    },
    gateway: {
      tls: gatewayTls,
      maxPendingConnections: v('gateway.max_pending_connections') as number,
      ws: parseHostPort(v('gateway.ws_addr') as string)!,
      tcp: parseHostPort(v('gateway.tcp_addr') as string)!,
      tokenAuthOn: v('gateway.token_auth_on') as boolean,
      maxFrameBytes: v('gateway.max_frame_bytes') as number,
      authTimeoutMs: parseDuration(v('gateway.auth_timeout') as string)!,
      idleTimeoutMs: parseDuration(v('gateway.idle_timeout') as string)!,
      maxOutboundBytes: v('gateway.max_outbound_bytes') as number,
    },
    message: {
      personWhitelistEnabled: v('message.person_whitelist_enabled') as boolean,
      systemDeviceId: v('message.system_device_id') as string,
    },
    delivery: {
      retryIntervalMs: Math.max(1, parseDuration(v('delivery.retry_interval') as string)!),
      retryMaxCount: v('delivery.retry_max_count') as number,
      pendingAckMaxPerSession: v('delivery.pending_ack_max_per_session') as number,
    },
    store: { sync: v('store.sync') as 'full' | 'normal', batchMaxRows: v('store.batch_max_rows') as number },
    log: { level: v('log.level') as string },
    cluster: {
      id: v('cluster.id') as string,
      initialSlotCount: v('cluster.initial_slot_count') as number,
      hashSlotCount: v('cluster.hash_slot_count') as number,
      slotReplicaN: v('cluster.slot_replica_n') as number,
      channelReplicaN: v('cluster.channel_replica_n') as number,
    },
    observability: {
      debugApiEnable: v('observability.debug_api_enable') as boolean,
      metricsEnable: v('observability.metrics_enable') as boolean,
      uvThreadpoolSize: Math.min(1024, Math.max(1, Number(env.UV_THREADPOOL_SIZE) || 4)),
    },
    top: {
      apiEnable: v('top.api_enable') as boolean,
      collectIntervalMs: Math.max(10, parseDuration(v('top.collect_interval') as string)!),
      historyWindowMs: parseDuration(v('top.history_window') as string)!,
    },
    bench: {
      apiEnable: v('bench.api_enable') as boolean,
      apiToken: v('bench.api_token') as string,
      apiMaxBatchSize: v('bench.api_max_batch_size') as number,
      apiMaxPayloadBytes: v('bench.api_max_payload_bytes') as number,
    },
    webhook: {
      httpAddr: v('webhook.http_addr') as string,
      secret: v('webhook.secret') as string,
      focusEvents: splitList(v('webhook.focus_events') as string),
      queueSize: v('webhook.queue_size') as number,
      workers: v('webhook.workers') as number,
      msgNotifyBatchMaxItems: v('webhook.msg_notify_batch_max_items') as number,
      msgNotifyBatchMaxWaitMs: parseDuration(v('webhook.msg_notify_batch_max_wait') as string)!,
      onlineStatusBatchMaxItems: v('webhook.online_status_batch_max_items') as number,
      onlineStatusBatchMaxWaitMs: parseDuration(v('webhook.online_status_batch_max_wait') as string)!,
      offlineUidBatchSize: v('webhook.offline_uid_batch_size') as number,
      requestTimeoutMs: parseDuration(v('webhook.request_timeout') as string)!,
      retryMaxAttempts: v('webhook.retry_max_attempts') as number,
    },
    values: Object.fromEntries(values) as Config['values'],
  };
}

/** The effective values with secrets replaced, for display. */
export function redactedValues(config: Config): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(config.values)) {
    const spec = (OPTIONS as Record<string, OptionSpec>)[key];
    out[key] = spec?.secret && value !== '' ? '[redacted]' : value;
  }
  return out;
}
