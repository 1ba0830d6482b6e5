import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';

/**
 * What an API key may do. `admin` grants every scope (and the system-uid and
 * connection-control operations only it has).
 */
export const API_SCOPES = ['tokens', 'send', 'channels', 'read', 'admin'] as const;
export type ApiScope = (typeof API_SCOPES)[number];

/** One configured API key (`[[api.keys]]`). The secret never leaves the process. */
export interface ApiKey {
  name: string;
  secret: string;
  scopes: ApiScope[];
}

/** A certificate and its key, read from PEM files at start. */
export interface TlsFiles {
  cert: Buffer;
  key: Buffer;
}

/** Shortest secret accepted, characters: shorter ones are guessable. */
export const MIN_SECRET_LENGTH = 16;
const MAX_SECRET_LENGTH = 1024;
const NAME = /^[A-Za-z0-9._-]{1,64}$/;

function parseList(raw: unknown, fromEnv: boolean): unknown {
  if (!fromEnv || typeof raw !== 'string') return raw;
  if (raw.trim() === '') return [];
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

/**
 * Checks `api.keys`: a list of `{name, secret, scopes}` (TOML array of tables,
 * or the same list as JSON in `PARLEY_API_KEYS`). Problems name the entry,
 * never its secret.
 */
export function parseApiKeys(raw: unknown, fromEnv: boolean): { keys: ApiKey[]; problems: string[] } {
  const list = parseList(raw, fromEnv);
  if (!Array.isArray(list)) {
    return { keys: [], problems: [`api.keys must be a list of {name, secret, scopes}${fromEnv ? ' as JSON' : ' ([[api.keys]] tables)'}`] };
  }
  const keys: ApiKey[] = [];
  const problems: string[] = [];
  list.forEach((entry: unknown, i) => {
    const at = `api.keys[${i}]`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      problems.push(`${at} must be a table with name, secret and scopes`);
      return;
    }
    const e = entry as Record<string, unknown>;
    for (const field of Object.keys(e)) if (!['name', 'secret', 'scopes'].includes(field)) problems.push(`${at}: unknown field "${field}"`);
    const name = typeof e.name === 'string' && NAME.test(e.name) ? e.name : undefined;
    if (!name) problems.push(`${at}.name must be 1-64 characters of A-Z a-z 0-9 . _ -`);
    const label = name ? `api.keys "${name}"` : at;
    const secret = typeof e.secret === 'string' ? e.secret : '';
    if (secret.length < MIN_SECRET_LENGTH || secret.length > MAX_SECRET_LENGTH || /\s/.test(secret)) {
      problems.push(`${label}: secret must be ${MIN_SECRET_LENGTH}-${MAX_SECRET_LENGTH} characters without spaces`);
    }
    const scopes = Array.isArray(e.scopes) ? e.scopes : [];
    const unknown = scopes.filter((s) => !(API_SCOPES as readonly unknown[]).includes(s));
    if (scopes.length === 0 || unknown.length > 0) {
      problems.push(
        `${label}: scopes must be a non-empty list of ${API_SCOPES.join(', ')}${unknown.length ? ` (unknown: ${unknown.map(String).join(', ')})` : ''}`,
      );
    }
    if (name && keys.some((k) => k.name === name)) problems.push(`${label}: the name is used twice`);
    if (secret !== '' && keys.some((k) => k.secret === secret)) problems.push(`${label}: the secret is the same as another key's`);
    if (name) keys.push({ name, secret, scopes: [...new Set(scopes as ApiScope[])] });
  });
  return { keys, problems };
}

/** How `api.keys` shows in `config validate` and `/debug/config`: names and scopes, never secrets. */
export function describeKeys(keys: readonly ApiKey[]): string {
  return keys.map((k) => `${k.name} (${k.scopes.join(', ')})`).join('; ');
}

/** Loopback addresses: 127.0.0.0/8, ::1 (also IPv4-mapped) and `localhost`. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  return h === 'localhost' || h === '::1' || /^(::ffff:)?127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/**
 * Reads a certificate/key pair named by `<prefix>.tls_cert` and `<prefix>.tls_key`:
 * both or neither, each readable, and the key must match the certificate.
 */
export function readTlsPair(prefix: string, certFile: string, keyFile: string, problems: string[]): TlsFiles | undefined {
  if (certFile === '' && keyFile === '') return undefined;
  if (certFile === '' || keyFile === '') {
    problems.push(`${prefix}.tls_cert and ${prefix}.tls_key must be set together`);
    return undefined;
  }
  const read = (file: string, key: string): Buffer | undefined => {
    try {
      return readFileSync(file);
    } catch (err) {
      problems.push(`${key} ${file}: ${(err as Error).message}`);
      return undefined;
    }
  };
  const cert = read(certFile, `${prefix}.tls_cert`);
  const key = read(keyFile, `${prefix}.tls_key`);
  if (!cert || !key) return undefined;
  try {
    createSecureContext({ cert, key });
  } catch (err) {
    problems.push(`${prefix}.tls_cert ${certFile} / ${prefix}.tls_key ${keyFile}: ${(err as Error).message}`);
    return undefined;
  }
  return { cert, key };
}

/** Checks across the API's access settings that no single key can express. */
export function accessProblems(a: {
  listenHost: string;
  keys: readonly ApiKey[];
  allowUnauthenticated: boolean;
  debugApiEnable: boolean;
  benchApiEnable: boolean;
  benchApiToken: string;
  corsOrigins: readonly string[];
}): string[] {
  const problems: string[] = [];
  const exposed = !isLoopbackHost(a.listenHost);
  if (exposed && a.keys.length === 0 && !a.allowUnauthenticated) {
    problems.push(
      `api.listen_addr ${a.listenHost} is not a loopback address and no api.keys are configured: anyone reaching it could set any user's token. Configure api.keys, listen on 127.0.0.1, or set api.allow_unauthenticated = true`,
    );
  }
  if (exposed && a.benchApiToken === '') {
    if (a.debugApiEnable)
      problems.push(`observability.debug_api_enable on a non-loopback api.listen_addr (${a.listenHost}) needs bench.api_token`);
    if (a.benchApiEnable) problems.push(`bench.api_enable on a non-loopback api.listen_addr (${a.listenHost}) needs bench.api_token`);
  }
  for (const origin of a.corsOrigins) {
    if (origin !== '*' && !/^https?:\/\/[^/\s]+$/i.test(origin))
      problems.push(`api.cors_origins: "${origin}" must be * or scheme://host[:port] with no path`);
  }
  return problems;
}
