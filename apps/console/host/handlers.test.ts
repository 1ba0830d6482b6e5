import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Value } from '@sinclair/typebox/value';
import { DebugConfig, OpsReply, TopSnapshot } from '@parley/shared';
import { closedPort, startHttp, startRealNode, startSilent, type RealNode } from '../test/real-node.ts';
import type { HostHandlers, HostResult } from './contract.ts';
import { createHostHandlers } from './handlers.ts';
import { NodeRegistry } from './node-registry.ts';

const TOKEN = 'debug-t0ken-value';

function value<T>(r: HostResult<T>): T {
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.error}`);
  return r.value;
}

describe('console host handlers against real nodes', () => {
  let guarded: RealNode;
  let plain: RealNode;
  let registry: NodeRegistry;
  let h: HostHandlers;
  let guardedId: string;
  let plainId: string;

  beforeAll(async () => {
    guarded = await startRealNode({
      PARLEY_OBSERVABILITY_DEBUG_API_ENABLE: 'true',
      PARLEY_BENCH_API_TOKEN: TOKEN,
      PARLEY_NODE_NAME: 'guarded',
    });
    plain = await startRealNode({ PARLEY_NODE_NAME: 'plain' });
    registry = new NodeRegistry();
    h = createHostHandlers({ registry, fetch: (url, init) => fetch(url, init), platform: 'web', version: '0.1.0' });
    guardedId = value(await h['nodes:add']({ url: guarded.api, name: 'guarded' })).id;
    plainId = value(await h['nodes:add']({ url: `${plain.api}/` })).id;
  });
  afterAll(async () => {
    await guarded.close();
    await plain.close();
  });

  it('lists configured nodes without their tokens', async () => {
    value(await h['nodes:set-token']({ id: guardedId, token: TOKEN }));
    const list = value(await h['nodes:list'](undefined));
    expect(list.nodes).toEqual([
      { id: guardedId, url: guarded.api, name: 'guarded', has_token: true },
      { id: plainId, url: plain.api, has_token: false },
    ]);
    expect(JSON.stringify(list)).not.toContain(TOKEN);
    expect(guardedId).toMatch(/^127-0-0-1-\d+$/);
  });

  it('forwards the ops routes and passes the node’s answer through', async () => {
    const health = value(await h['ops:get']({ node: plainId, path: '/healthz' }));
    expect(health).toMatchObject({ status: 200, body: '{"status":"ok"}' });
    expect(Value.Check(OpsReply, health)).toBe(true);
    expect(value(await h['ops:get']({ node: plainId, path: '/readyz' })).status).toBe(200);
    // The collector warms up (503) until it has two samples in the window.
    let top = value(await h['ops:get']({ node: plainId, path: '/top/v1/snapshot', query: { view: 'all', window: '2s' } }));
    for (const until = Date.now() + 5000; top.status === 503 && Date.now() < until;) {
      await new Promise((res) => setTimeout(res, 100));
      top = value(await h['ops:get']({ node: plainId, path: '/top/v1/snapshot', query: { view: 'all', window: '2s' } }));
    }
    expect(top.status).toBe(200);
    const snap = JSON.parse(top.body) as unknown;
    expect(Value.Check(TopSnapshot, snap)).toBe(true);
    expect((snap as TopSnapshot).node.name).toBe('plain');
    const bad = value(await h['ops:get']({ node: plainId, path: '/top/v1/snapshot', query: { view: 'nope' } }));
    expect(bad.status).toBe(400);
  });

  it('attaches the kept token to /debug/* only, and a node without the debug API answers 404', async () => {
    const config = value(await h['ops:get']({ node: guardedId, path: '/debug/config' }));
    expect(config.status).toBe(200);
    expect(Value.Check(DebugConfig, JSON.parse(config.body))).toBe(true);
    expect(config.body).not.toContain(TOKEN);
    value(await h['nodes:set-token']({ id: guardedId, token: '' }));
    expect(value(await h['ops:get']({ node: guardedId, path: '/debug/config' })).status).toBe(401);
    value(await h['nodes:set-token']({ id: guardedId, token: 'wrong' }));
    expect(value(await h['ops:get']({ node: guardedId, path: '/debug/config' })).status).toBe(401);
    expect(value(await h['ops:get']({ node: plainId, path: '/debug/config' })).status).toBe(404);
  });

  it('refuses nodes that are not configured', async () => {
    for (const node of ['nope', guarded.api, '127-0-0-1-1']) {
      const r = await h['ops:get']({ node, path: '/healthz' });
      expect(r.ok ? r.value : r.error.code, node).toBe('unknown_node');
    }
  });

  it('refuses every path that is not an ops route, and anything that could climb out of one', async () => {
    const paths = [
      '/user/token',
      '/message/send',
      '/bench/v1/capabilities',
      '/metrics',
      '/',
      '/healthz/',
      '/healthz?x=1',
      '/debugger',
      '/debug/../user/token',
      '/debug/./config',
      '/debug//config',
      '/debug/%2e%2e/user',
      '/debug/config%2F..',
      '\\debug\\config',
      'http://127.0.0.1:1/healthz',
      '//evil.example/healthz',
      '/top/v1/snapshot/../../user',
      '/debug/a/b/c/d/e/f/g/h/i',
    ];
    for (const path of paths) {
      const r = await h['ops:get']({ node: plainId, path });
      expect(r.ok ? `forwarded ${r.value.status}` : r.error.code, path).toBe('path_not_allowed');
    }
  });

  it('refuses malformed payloads with the first schema error', async () => {
    for (const payload of [
      undefined,
      null,
      'x',
      {},
      { node: plainId },
      { node: plainId, path: '/healthz', extra: 1 },
      { node: plainId, path: '/healthz', query: { 'a b': 'c' } },
      { node: '', path: '/healthz' },
    ]) {
      const r = await h['ops:get'](payload);
      expect(r.ok ? 'accepted' : r.error.code, JSON.stringify(payload)).toBe('invalid_request');
    }
    const add = await h['nodes:add']({ url: 'ftp://127.0.0.1/' });
    expect(add.ok ? 'added' : add.error).toEqual({ code: 'invalid_request', error: 'only http and https node URLs are supported' });
    for (const url of ['http://user:pw@127.0.0.1:1', 'http://127.0.0.1:1/?token=x', 'not a url']) {
      const r = await h['nodes:add']({ url });
      expect(r.ok ? 'added' : r.error.code, url).toBe('invalid_request');
    }
    const dup = await h['nodes:add']({ url: plain.api });
    expect(dup.ok ? 'added' : dup.error.code).toBe('duplicate_node');
    const gone = await h['nodes:remove']({ id: 'nope' });
    expect(gone.ok ? 'removed' : gone.error.code).toBe('unknown_node');
  });

  it('says unreachable, timed out or too large, and never follows a redirect', async () => {
    const silent = await startSilent();
    const redirect = await startHttp((_req, res) => res.writeHead(302, { location: 'http://127.0.0.1:1/elsewhere' }).end());
    const huge = await startHttp((_req, res) => res.end('x'.repeat(64 * 1024)));
    const reg = new NodeRegistry();
    const hh = createHostHandlers({
      registry: reg,
      fetch: (url, init) => fetch(url, init),
      platform: 'desktop',
      version: 'x',
      timeoutMs: 300,
      maxBodyBytes: 1024,
    });
    const id = async (url: string) => value(await hh['nodes:add']({ url })).id;
    try {
      const code = async (url: string) => {
        const r = await hh['ops:get']({ node: await id(url), path: '/healthz' });
        return r.ok ? `status ${r.value.status}` : r.error.code;
      };
      expect(await code(await closedPort())).toBe('unreachable');
      expect(await code(silent.url)).toBe('timeout');
      expect(await code(redirect.url)).toBe('status 302');
      expect(await code(huge.url)).toBe('too_large');
      expect(value(await hh['app:info'](undefined))).toEqual({ platform: 'desktop', version: 'x' });
    } finally {
      await silent.close();
      await redirect.close();
      await huge.close();
    }
  });

  it('removes a node, after which it is refused', async () => {
    const list = value(await h['nodes:remove']({ id: plainId }));
    expect(list.nodes.map((n) => n.id)).toEqual([guardedId]);
    const r = await h['ops:get']({ node: plainId, path: '/healthz' });
    expect(r.ok ? 'forwarded' : r.error.code).toBe('unknown_node');
  });
});
