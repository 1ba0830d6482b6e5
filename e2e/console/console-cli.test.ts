import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sourceHash } from '../../apps/console/build/source-hash.ts';
import { SOURCE_NODE_ARGS } from '../../test-support/source-node.ts';
import { TestConsole, TestNode } from './harness.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const BENCH_TOKEN = 'node-bench-token-7f3a';

/** A request to the console, without following redirects. */
async function get(url: string, headers: Record<string, string> = {}, init: RequestInit = {}) {
  const res = await fetch(url, { redirect: 'manual', headers, ...init });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

describe('parleyctl console: loopback, token, cookie, proxy (HTTP, no browser)', () => {
  let node: TestNode;
  let other: TestNode;
  let c: TestConsole;
  let cookie = '';
  let nodeId = '';

  beforeAll(async () => {
    node = await new TestNode({ id: 1, name: 'cli-a', debug: true, token: BENCH_TOKEN }).start();
    other = await new TestNode({ id: 2, name: 'cli-not-configured' }).start();
    c = await new TestConsole([node.api]).start();
    nodeId = `127-0-0-1-${node.port}`;
  }, 60_000);
  afterAll(async () => {
    await c?.stop();
    await node?.dispose();
    await other?.dispose();
  });

  it('prints one JSON line with a loopback URL carrying a fresh 256-bit token', async () => {
    expect(c.launchUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{43}$/);
    const again = await new TestConsole([node.api]).start();
    try {
      expect(again.token).not.toBe(c.token);
    } finally {
      expect(await again.stop()).toBe(0);
    }
  });

  it('answers 401 to every request with neither the token nor the session cookie', async () => {
    for (const path of ['/', '/overview', '/index.html', '/api/nodes', `/api/nodes/${nodeId}/ops/healthz`, '/assets/x.js']) {
      const r = await get(c.origin + path);
      expect(r.status, path).toBe(401);
      expect(r.text).not.toContain(c.token);
    }
    expect((await get(`${c.origin}/?token=wrong`)).status).toBe(401);
    expect((await get(`${c.origin}/api/nodes`, { cookie: `parley_console_${new URL(c.origin).port}=forged` })).status).toBe(401);
  });

  it('trades the token for an HttpOnly, SameSite=Strict cookie and drops it from the address', async () => {
    const r = await get(`${c.origin}/overview?token=${c.token}`);
    expect(r.status).toBe(302);
    expect(r.headers.get('location')).toBe('/overview');
    const set = r.headers.get('set-cookie') ?? '';
    expect(set).toMatch(/HttpOnly/);
    expect(set).toMatch(/SameSite=Strict/);
    expect(set).not.toContain(c.token);
    cookie = set.split(';')[0]!;
    const page = await get(`${c.origin}/overview`, { cookie });
    expect(page.status).toBe(200);
    expect(page.text).toContain('<div id="root">');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
  });

  it('serves the console that `npm run build -w apps/console` built from the current sources', async () => {
    const dist = join(ROOT, 'apps', 'console', 'dist');
    expect(readFileSync(join(dist, '.source-hash'), 'utf8').trim()).toBe(sourceHash());
    const index = await get(`${c.origin}/`, { cookie });
    expect(index.text).toBe(readFileSync(join(dist, 'index.html'), 'utf8'));
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(index.text)![1]!;
    const asset = await get(c.origin + script, { cookie });
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toContain('javascript');
    expect(asset.headers.get('cache-control')).toContain('immutable');
    expect((await get(`${c.origin}/assets/none.js`, { cookie })).status).toBe(404);
    expect((await get(`${c.origin}/assets/..%2f..%2fpackage.json`, { cookie })).status).toBe(404);
  });

  it('refuses a Host that is not its loopback address (DNS rebinding)', async () => {
    // fetch() cannot set Host; node:http can.
    const status = await new Promise<number>((resolve, reject) => {
      const u = new URL(c.origin);
      const req = request(
        { host: u.hostname, port: u.port, path: '/api/nodes', headers: { cookie, host: `evil.example:${u.port}` } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(421);
  });

  it('proxies GETs of ops routes to configured nodes', async () => {
    const h = await get(`${c.origin}/api/nodes/${nodeId}/ops/healthz`, { cookie });
    expect(h).toMatchObject({ status: 200, text: '{"status":"ok"}' });
    expect(h.headers.get('x-parley-upstream')).toBe('1');
    expect((await get(`${c.origin}/api/nodes/${nodeId}/ops/readyz`, { cookie })).status).toBe(200);
    const top = await get(`${c.origin}/api/nodes/${nodeId}/ops/top/v1/snapshot?view=bogus`, { cookie });
    expect(top.status).toBe(400);
  });

  it('refuses a node that is not configured, paths that are not ops routes, and anything but GET', async () => {
    const otherId = `127-0-0-1-${other.port}`;
    const notConfigured = await get(`${c.origin}/api/nodes/${otherId}/ops/healthz`, { cookie });
    expect(notConfigured.status).toBe(404);
    expect(JSON.parse(notConfigured.text)).toMatchObject({ code: 'unknown_node' });
    expect(notConfigured.headers.get('x-parley-upstream')).toBeNull();
    for (const path of [
      'user/token',
      'message/send',
      'bench/v1/capabilities',
      'metrics',
      'debug/%2e%2e/user/token',
      'top/v1/snapshot/%2e%2e/%2e%2e/user',
    ]) {
      const r = await get(`${c.origin}/api/nodes/${nodeId}/ops/${path}`, { cookie });
      expect(r.status, path).toBe(403);
      expect(JSON.parse(r.text)).toMatchObject({ code: 'path_not_allowed' });
    }
    const post = await get(
      `${c.origin}/api/nodes/${nodeId}/ops/healthz`,
      { cookie, 'content-type': 'application/json' },
      { method: 'POST', body: '{}' },
    );
    expect(post.status).toBe(405);
  });

  it('keeps a node’s bench.api_token on the server: it is used for /debug/* and never sent back', async () => {
    expect((await get(`${c.origin}/api/nodes/${nodeId}/ops/debug/config`, { cookie })).status).toBe(401);
    const set = await get(
      `${c.origin}/api/nodes/${nodeId}/token`,
      { cookie, 'content-type': 'application/json', origin: c.origin },
      { method: 'PUT', body: JSON.stringify({ token: BENCH_TOKEN }) },
    );
    expect(set.status).toBe(200);
    expect(set.text).not.toContain(BENCH_TOKEN);
    expect(JSON.parse(set.text)).toMatchObject({ id: nodeId, has_token: true });
    const config = await get(`${c.origin}/api/nodes/${nodeId}/ops/debug/config`, { cookie });
    expect(config.status).toBe(200);
    expect(config.text).not.toContain(BENCH_TOKEN);
    expect((await get(`${c.origin}/api/nodes`, { cookie })).text).not.toContain(BENCH_TOKEN);
  });

  it('adds and removes nodes for its session; a cross-site request cannot', async () => {
    const body = JSON.stringify({ url: other.api, name: 'late' });
    const cross = await get(
      `${c.origin}/api/nodes`,
      { cookie, 'content-type': 'application/json', origin: 'https://evil.example' },
      { method: 'POST', body },
    );
    expect(cross.status).toBe(403);
    const added = await get(
      `${c.origin}/api/nodes`,
      { cookie, 'content-type': 'application/json', origin: c.origin },
      { method: 'POST', body },
    );
    expect(added.status).toBe(201);
    const id = (JSON.parse(added.text) as { id: string }).id;
    expect((await get(`${c.origin}/api/nodes/${id}/ops/healthz`, { cookie })).status).toBe(200);
    const removed = await get(
      `${c.origin}/api/nodes/${id}`,
      { cookie, 'content-type': 'application/json' },
      { method: 'DELETE', body: '{}' },
    );
    expect(removed.status).toBe(200);
    expect((await get(`${c.origin}/api/nodes/${id}/ops/healthz`, { cookie })).status).toBe(404);
  });

  it('never writes the launch token or a node token to its log', async () => {
    expect(c.stderr()).toContain('console listening');
    expect(c.stderr()).not.toContain(c.token);
    expect(c.stderr()).not.toContain(BENCH_TOKEN);
  });

  it('refuses to listen off loopback, and refuses a bad node URL, before serving anything', () => {
    const run = (...args: string[]) =>
      spawnSync(process.execPath, [...SOURCE_NODE_ARGS, join(ROOT, 'apps/migrator/bin/parleyctl.js'), 'console', '--no-open', ...args], {
        encoding: 'utf8',
        timeout: 30_000,
      });
    const wide = run('--listen', '0.0.0.0:0', '--node', node.api);
    expect(wide.status).toBe(2);
    expect(wide.stderr).toContain('loopback only');
    expect(wide.stdout).toBe('');
    const bad = run('--listen', '127.0.0.1:0', '--node', 'http://user:pw@127.0.0.1:1');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('must not carry credentials');
    expect(bad.stderr).not.toContain('pw@');
  });
});
