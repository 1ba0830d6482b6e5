import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.ts';
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
    expect(c.api.listen).toEqual({ host: '0.0.0.0', port: 5001 });
    expect(c.gateway.ws).toEqual({ host: '0.0.0.0', port: 5200 });
    expect(c.gateway.tcp).toEqual({ host: '0.0.0.0', port: 5100 });
    expect(c.gateway.tokenAuthOn).toBe(true);
    expect(c.message.personWhitelistEnabled).toBe(false);
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
