import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, redactedValues } from './config.ts';
import { parseDuration } from './duration.ts';

function tomlFile(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'parley-cfg-')), 'parley.toml');
  writeFileSync(file, text);
  return file;
}

function problems(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    const c = loadConfig(undefined, {});
    expect(c.node).toEqual({ id: 1, name: 'node-1', dataDir: './data' });
    expect(c.api.listen).toEqual({ host: '127.0.0.1', port: 5001 });
    expect(c.api.keys).toEqual([]);
    expect(c.api.corsOrigins).toEqual([]);
    expect(c.gateway.ws).toEqual({ host: '0.0.0.0', port: 5200 });
    expect(c.gateway.tcp).toEqual({ host: '0.0.0.0', port: 5100 });
    expect(c.gateway.tokenAuthOn).toBe(true);
    expect(c.message.personWhitelistEnabled).toBe(false);
    expect(c.api.requestTimeoutMs).toBe(30_000);
  });

  it('reads api.request_timeout and refuses zero', () => {
    expect(loadConfig(undefined, { PARLEY_API_REQUEST_TIMEOUT: '2m' }).api.requestTimeoutMs).toBe(120_000);
    expect(problems(() => loadConfig(undefined, { PARLEY_API_REQUEST_TIMEOUT: '0s' }))).toEqual(['api.request_timeout must be above zero']);
  });

  it('reads dotted keys and tables from TOML, and env overrides the file', () => {
    const file = tomlFile('api.listen_addr = "127.0.0.1:0"\n[node]\nid = 7\n"data_dir" = "/tmp/x"\n[gateway]\ntoken_auth_on = false\n');
    const c = loadConfig(file, { PARLEY_NODE_ID: '9', PARLEY_GATEWAY_AUTH_TIMEOUT: '2s' });
    expect(c.node.id).toBe(9);
    expect(c.node.dataDir).toBe('/tmp/x');
    expect(c.gateway.tokenAuthOn).toBe(false);
    expect(c.gateway.authTimeoutMs).toBe(2000);
    expect(c.api.listen.port).toBe(0);
  });

  it('reports every problem at once', () => {
    const file = tomlFile('node.id = 0\nnode.color = "red"\ngateway.token_auth_on = "yes"\napi.listen_addr = "nowhere"\n');
    const found = problems(() => loadConfig(file, { PARLEY_LOG_LEVEL: 'loud', PARLEY_NOPE: '1', PARLEY_GATEWAY_IDLE_TIMEOUT: 'soon' }));
    expect(found).toHaveLength(7);
    expect(found.join('\n')).toMatch(/node.id must be between 1 and 1023/);
    expect(found.join('\n')).toMatch(/unknown key "node.color"/);
    expect(found.join('\n')).toMatch(/unknown variable PARLEY_NOPE/);
  });

  it('takes PARLEY_WKCRYPTO as ours and refuses a value other than native or js', () => {
    expect(() => loadConfig(undefined, { PARLEY_WKCRYPTO: 'js' })).not.toThrow();
    expect(() => loadConfig(undefined, { PARLEY_WKCRYPTO: 'native' })).not.toThrow();
    expect(problems(() => loadConfig(undefined, { PARLEY_WKCRYPTO: 'fast' }))).toEqual([
      'environment: PARLEY_WKCRYPTO must be "native" or "js" (unset: native when built)',
    ]);
  });

  it('takes PARLEY_READPUMP as ours and refuses a value other than on or off', () => {
    expect(() => loadConfig(undefined, { PARLEY_READPUMP: 'on' })).not.toThrow();
    expect(() => loadConfig(undefined, { PARLEY_READPUMP: 'off' })).not.toThrow();
    expect(problems(() => loadConfig(undefined, { PARLEY_READPUMP: 'yes' }))).toEqual([
      'environment: PARLEY_READPUMP must be "on" or "off" (unset: on when built)',
    ]);
  });

  it('names a file it cannot parse', () => {
    expect(problems(() => loadConfig(tomlFile('node.id = = 1'), {}))[0]).toMatch(/parley\.toml/);
  });
});

describe('parseDuration', () => {
  it('reads Go-style durations', () => {
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('1m30s')).toBe(90_000);
    expect(parseDuration('2h')).toBe(7_200_000);
    for (const bad of ['', '10', 's', '1x', '1s ']) expect(parseDuration(bad)).toBeUndefined();
  });
});

describe('API access settings', () => {
  const key = { name: 'backend', secret: 'backend-secret-0123456789', scopes: ['tokens', 'send'] };

  it('listens on loopback without keys and on every interface once keys are configured', () => {
    const c = loadConfig(undefined, { PARLEY_API_KEYS: JSON.stringify([key]) });
    expect(c.api.listen).toEqual({ host: '0.0.0.0', port: 5001 });
    expect(c.api.keys).toEqual([key]);
    expect(c.values['api.keys']).toBe('backend (tokens, send)');
  });

  it('reads [[api.keys]] tables from TOML', () => {
    const file = tomlFile(
      '[[api.keys]]\nname = "a"\nsecret = "aaaaaaaaaaaaaaaaaaaa"\nscopes = ["read"]\n[[api.keys]]\nname = "b"\nsecret = "bbbbbbbbbbbbbbbbbbbb"\nscopes = ["admin"]\n',
    );
    expect(loadConfig(file, {}).api.keys.map((k) => k.name)).toEqual(['a', 'b']);
  });

  it('refuses a non-loopback listener without keys unless explicitly allowed', () => {
    expect(problems(() => loadConfig(undefined, { PARLEY_API_LISTEN_ADDR: '0.0.0.0:5001' }))[0]).toMatch(
      /not a loopback address and no api.keys/,
    );
    expect(
      loadConfig(undefined, { PARLEY_API_LISTEN_ADDR: '0.0.0.0:5001', PARLEY_API_ALLOW_UNAUTHENTICATED: 'true' }).api.listen.host,
    ).toBe('0.0.0.0');
    expect(loadConfig(undefined, { PARLEY_API_LISTEN_ADDR: '[::1]:0' }).api.listen.host).toBe('::1');
  });

  it('refuses debug or bench routes on a non-loopback listener without bench.api_token', () => {
    const env = { PARLEY_API_KEYS: JSON.stringify([key]), PARLEY_OBSERVABILITY_DEBUG_API_ENABLE: 'true', PARLEY_BENCH_API_ENABLE: 'true' };
    expect(problems(() => loadConfig(undefined, env))).toEqual([
      expect.stringMatching(/debug_api_enable on a non-loopback .* needs bench.api_token/),
      expect.stringMatching(/bench.api_enable on a non-loopback .* needs bench.api_token/),
    ]);
    expect(loadConfig(undefined, { ...env, PARLEY_BENCH_API_TOKEN: 'x' }).observability.debugApiEnable).toBe(true);
  });

  it('names every bad key without showing a secret', () => {
    const bad = [{ name: 'x y', secret: 'short', scopes: ['everything'] }, { ...key }, { ...key }];
    const found = problems(() => loadConfig(undefined, { PARLEY_API_KEYS: JSON.stringify(bad) }));
    expect(found.join('\n')).toMatch(/api.keys\[0\].name must be/);
    expect(found.join('\n')).toMatch(/secret must be 16-1024 characters/);
    expect(found.join('\n')).toMatch(/unknown: everything/);
    expect(found.join('\n')).toMatch(/"backend": the name is used twice/);
    expect(found.join('\n')).not.toContain(key.secret);
    expect(problems(() => loadConfig(undefined, { PARLEY_API_KEYS: 'not json' }))[0]).toMatch(/api.keys must be a list .* as JSON/);
  });

  it('checks cors origins and TLS file pairs, naming the paths', () => {
    expect(problems(() => loadConfig(undefined, { PARLEY_API_CORS_ORIGINS: 'https://ok.example, ftp://x/y' }))[0]).toMatch(
      /"ftp:\/\/x\/y" must be/,
    );
    expect(problems(() => loadConfig(undefined, { PARLEY_API_TLS_CERT: '/nope/cert.pem' }))[0]).toMatch(/must be set together/);
    const found = problems(() =>
      loadConfig(undefined, { PARLEY_GATEWAY_TLS_CERT: '/nope/cert.pem', PARLEY_GATEWAY_TLS_KEY: '/nope/key.pem' }),
    );
    expect(found.join('\n')).toMatch(/gateway.tls_cert \/nope\/cert.pem: ENOENT/);
  });

  it('says what is wrong with a port, and where a TOML file is broken', () => {
    expect(problems(() => loadConfig(undefined, { PARLEY_GATEWAY_WS_ADDR: '0.0.0.0:70000' }))[0]).toMatch(
      /port 70000 is out of range \(0-65535\)/,
    );
    expect(problems(() => loadConfig(tomlFile('[node]\nid = 1\nname = \n'), {}))[0]).toMatch(/parley\.toml:3:\d+: /);
  });

  it('refuses an inconsistent cluster config and reads a consistent one', () => {
    expect(loadConfig(undefined, {}).cluster).toMatchObject({
      enabled: false,
      natsServers: ['nats://127.0.0.1:4222'],
      slotLeaseTtlMs: 6000,
    });
    const onSqlite = problems(() => loadConfig(undefined, { PARLEY_CLUSTER_ENABLED: 'true', PARLEY_CLUSTER_ID: 'c1' }));
    expect(onSqlite).toEqual([expect.stringMatching(/cluster.enabled needs store.driver = "postgres"/)]);
    const pg = { PARLEY_STORE_DRIVER: 'postgres', PARLEY_STORE_POSTGRES_URL: 'postgres://u:pw@db:5432/im' };
    expect(problems(() => loadConfig(undefined, { ...pg, PARLEY_CLUSTER_ENABLED: 'true' }))).toEqual([
      expect.stringMatching(/cluster.enabled needs cluster.id/),
    ]);
    expect(problems(() => loadConfig(undefined, { ...pg, PARLEY_CLUSTER_ENABLED: 'true', PARLEY_CLUSTER_ID: 'a.b' }))[0]).toMatch(
      /cluster.id: 1-64 characters/,
    );
    const badUrl = problems(() => loadConfig(undefined, { PARLEY_CLUSTER_NATS_URL: 'http://u:hunter2@x:4222' }));
    expect(badUrl).toEqual(['cluster.nats_url: each server must be a nats:// or tls:// URL']);
    expect(problems(() => loadConfig(undefined, { PARLEY_CLUSTER_SLOT_LEASE_TTL: '1s' }))).toEqual([
      'cluster.slot_lease_ttl must be at least 2s',
    ]);
    const c = loadConfig(undefined, {
      ...pg,
      PARLEY_CLUSTER_ENABLED: 'true',
      PARLEY_CLUSTER_ID: 'prod-1',
      PARLEY_CLUSTER_NATS_URL: 'nats://a:4222, nats://b:4222',
      PARLEY_CLUSTER_FORWARD_TIMEOUT: '3s',
    });
    expect(c.cluster).toMatchObject({
      enabled: true,
      id: 'prod-1',
      natsServers: ['nats://a:4222', 'nats://b:4222'],
      forwardTimeoutMs: 3000,
    });
    expect(redactedValues(c)['cluster.nats_url']).toBe('[redacted]');
  });

  it('shows the effective node name', () => {
    expect(loadConfig(undefined, { PARLEY_NODE_ID: '7' }).values['node.name']).toBe('node-7');
  });
});
