import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOST_CHANNELS, type HostChannel, type HostResult, type WkDesktop } from '../host/contract.ts';
import { createHostHandlers } from '../host/handlers.ts';
import { NodeRegistry } from '../host/node-registry.ts';
import { onePlan, PARLEYCTL } from '../test/migration-fixtures.ts';
import { startRealNode, type RealNode } from '../test/real-node.ts';
import { createBridge } from './bridge.ts';
import { APP_ORIGIN, isConsoleFrame, registerIpc, type IpcMainLike } from './ipc.ts';

type Listener = Parameters<IpcMainLike['handle']>[1];

/** ipcMain as the main process sees it: channel → listener; invoking an unregistered channel fails like Electron does. */
class FakeIpcMain implements IpcMainLike {
  readonly listeners = new Map<string, Listener>();
  handle(channel: string, listener: Listener): void {
    if (this.listeners.has(channel)) throw new Error(`second handler for ${channel}`);
    this.listeners.set(channel, listener);
  }
  invoke(frameUrl: string, channel: string, payload?: unknown): Promise<unknown> {
    const l = this.listeners.get(channel);
    if (!l) return Promise.reject(new Error(`No handler registered for '${channel}'`));
    // Electron passes payloads by structured clone: the handler never shares objects with the page.
    return Promise.resolve(l({ senderFrame: { url: frameUrl } }, payload === undefined ? undefined : structuredClone(payload)));
  }
}

const TOKEN = 'ipc-debug-token';

describe('Electron IPC contract (main handlers behind the preload bridge, no Electron binary)', () => {
  let node: RealNode;
  let ipc: FakeIpcMain;
  let bridge: WkDesktop;
  let sent: HostChannel[];

  beforeAll(async () => {
    node = await startRealNode({ PARLEY_OBSERVABILITY_DEBUG_API_ENABLE: 'true', PARLEY_BENCH_API_TOKEN: TOKEN });
    ipc = new FakeIpcMain();
    registerIpc(
      ipc,
      createHostHandlers({ registry: new NodeRegistry(), fetch: (url, init) => fetch(url, init), platform: 'desktop', version: '9.9.9' }),
    );
    sent = [];
    bridge = createBridge((channel, payload) => {
      sent.push(channel);
      return ipc.invoke(`${APP_ORIGIN}/overview`, channel, payload);
    });
  });
  afterAll(async () => node.close());

  it('registers exactly the contract’s channels, and the bridge exposes one method per channel and nothing else', () => {
    expect([...ipc.listeners.keys()].sort()).toEqual([...HOST_CHANNELS].sort());
    const shape = Object.fromEntries(Object.entries(bridge).map(([ns, o]) => [ns, Object.keys(o).sort()]));
    expect(shape).toEqual({
      app: ['info'],
      nodes: ['add', 'list', 'remove', 'setToken'],
      ops: ['get'],
      migration: [
        'check',
        'dbInfo',
        'plan',
        'report',
        'runCancel',
        'runStart',
        'runStatus',
        'savePlan',
        'setFields',
        'setRoot',
        'state',
        'tick',
      ],
    });
    // One bridge method per channel: twelve wizard channels beside the six of the console.
    expect(HOST_CHANNELS).toHaveLength(18);
  });

  it('carries every call to its channel and back', async () => {
    const ok = <T>(r: HostResult<T>) => {
      if (!r.ok) throw new Error(r.error.error);
      return r.value;
    };
    expect(ok(await bridge.app.info())).toEqual({ platform: 'desktop', version: '9.9.9' });
    const added = ok(await bridge.nodes.add({ url: node.api, name: 'n1' }));
    expect(ok(await bridge.nodes.list()).nodes).toEqual([added]);
    expect(ok(await bridge.ops.get({ node: added.id, path: '/healthz' }))).toMatchObject({ status: 200, body: '{"status":"ok"}' });
    expect(ok(await bridge.ops.get({ node: added.id, path: '/debug/config' })).status).toBe(401);
    const withToken = ok(await bridge.nodes.setToken({ id: added.id, token: TOKEN }));
    expect(withToken).toEqual({ ...added, has_token: true });
    const config = ok(await bridge.ops.get({ node: added.id, path: '/debug/config' }));
    expect(config.status).toBe(200);
    expect(JSON.stringify(config)).not.toContain(TOKEN);
    expect(JSON.stringify(ok(await bridge.nodes.list()))).not.toContain(TOKEN);
    expect(ok(await bridge.nodes.remove({ id: added.id })).nodes).toEqual([]);
    expect(sent).toEqual([
      'app:info',
      'nodes:add',
      'nodes:list',
      'ops:get',
      'ops:get',
      'nodes:set-token',
      'ops:get',
      'nodes:list',
      'nodes:remove',
    ]);
  });

  it('refuses unknown nodes and paths that are not ops routes', async () => {
    const added = await bridge.nodes.add({ url: node.api });
    const id = added.ok ? added.value.id : '';
    const unknown = await bridge.ops.get({ node: 'not-configured', path: '/healthz' });
    expect(unknown.ok ? 'forwarded' : unknown.error.code).toBe('unknown_node');
    for (const path of ['/user/token', '/bench/v1/capabilities', '/debug/../message/send', '/metrics']) {
      const r = await bridge.ops.get({ node: id, path });
      expect(r.ok ? 'forwarded' : r.error.code, path).toBe('path_not_allowed');
    }
  });

  it('refuses payloads a renderer should never send', async () => {
    for (const [channel, payload] of [
      ['ops:get', { node: 'x', path: '/healthz', method: 'POST' }],
      ['ops:get', 'GET /healthz'],
      ['nodes:add', { url: 'file:///etc/passwd' }],
      ['nodes:set-token', { id: 'x' }],
      ['nodes:remove', { id: 42 }],
    ] as const) {
      const r = (await ipc.invoke(`${APP_ORIGIN}/`, channel, payload)) as HostResult<unknown>;
      expect(r.ok ? 'accepted' : r.error.code, channel).toMatch(/^(invalid_request|unknown_node)$/);
    }
  });

  it('answers only the console’s own frames, and has no channel outside the contract', async () => {
    for (const frame of ['https://evil.example/', 'file:///tmp/x.html', 'app://console.evil/', 'http://127.0.0.1:5173/']) {
      const r = (await ipc.invoke(frame, 'nodes:list')) as HostResult<unknown>;
      expect(r.ok ? 'answered' : r.error.code, frame).toBe('invalid_request');
    }
    expect(isConsoleFrame('app://console')).toBe(true);
    expect(isConsoleFrame(undefined)).toBe(false);
    await expect(ipc.invoke(`${APP_ORIGIN}/`, 'shell:open', { url: 'https://x' })).rejects.toThrow(/No handler/);
  });
});

describe('the migration wizard over IPC (same handlers as the web host)', () => {
  const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'parley-ipc-wizard-')));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('chooses a root, saves a plan, ticks an item and refuses a workspace outside the plan’s folder', async () => {
    const ipc = new FakeIpcMain();
    registerIpc(
      ipc,
      createHostHandlers({
        registry: new NodeRegistry(),
        fetch: (url, init) => fetch(url, init),
        platform: 'desktop',
        version: '9.9.9',
        migration: { tool: PARLEYCTL },
      }),
    );
    const bridge = createBridge((channel, payload) => ipc.invoke(`${APP_ORIGIN}/migration`, channel, payload));
    const ok = <T>(r: HostResult<T>) => {
      if (!r.ok) throw new Error(r.error.error);
      return r.value;
    };
    const none = await bridge.migration.state();
    expect(ok(none)).toMatchObject({ root: null, root_locked: false, plans: [] });
    const noRoot = await bridge.migration.savePlan({ plan: onePlan(tmp, join(tmp, 'src')) });
    expect(noRoot.ok ? 'saved' : noRoot.error.code).toBe('no_root');
    const root = join(tmp, 'root');
    expect(ok(await bridge.migration.setRoot({ path: root })).root).toBe(root);
    const saved = ok(await bridge.migration.savePlan({ plan: onePlan(tmp, join(tmp, 'src')) }));
    expect(saved.id).toBe('plan-1');
    const detail = ok(await bridge.migration.plan({ plan_id: 'plan-1' }));
    expect(detail.proposals.prepare!.workspace).toBe(join(root, 'plan-1', 'ws-prepare'));
    const doc = ok(await bridge.migration.tick({ scope: 'plan-1', item: 'copy', done: true, by: 'desk' }));
    expect(doc.items.copy).toMatchObject({ done: true, by: 'desk' });
    const out = await bridge.migration.runStart({ plan_id: 'plan-1', stage: 'prepare', workspace: join(tmp, 'ws') });
    expect(out.ok ? 'started' : out.error.code).toBe('path_not_allowed');
    const raw = (await ipc.invoke(`${APP_ORIGIN}/`, 'migration:run-start', {
      plan_id: '../x',
      stage: 'prepare',
      workspace: '/x',
    })) as HostResult<unknown>;
    expect(raw.ok ? 'started' : raw.error.code).toBe('invalid_request');
  });
});
