import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRpc, startTestServer, type TestServer } from './helpers.ts';
import { call } from './ops-helpers.ts';

const TOKEN = 'bench-secret-91c2';

describe('bench routes disabled', () => {
  it('answer 404 page not found', async () => {
    const t = await startTestServer({ PARLEY_BENCH_API_TOKEN: TOKEN });
    try {
      for (const path of ['/bench/v1/capabilities', '/bench/v1/snapshot']) {
        const r = await call(t.api + path, { headers: { authorization: `Bearer ${TOKEN}` } });
        expect(r.status).toBe(404);
        expect(r.text).toBe('404 page not found');
      }
    } finally {
      await t.close();
    }
  });
});

describe('bench routes with a bearer token', () => {
  let t: TestServer;
  const auth = { authorization: `Bearer ${TOKEN}` };
  const bench = (path: string, body?: unknown, headers: Record<string, string> = auth) =>
    call(`${t.api}/bench/v1${path}`, { headers, body });

  beforeAll(async () => {
    t = await startTestServer({
      PARLEY_BENCH_API_ENABLE: 'true',
      PARLEY_BENCH_API_TOKEN: TOKEN,
      PARLEY_BENCH_API_MAX_BATCH_SIZE: '3',
      PARLEY_BENCH_API_MAX_PAYLOAD_BYTES: '4096',
    });
  });
  afterAll(async () => t.close());

  it('answers 401 without or with a wrong Bearer credential on every route', async () => {
    const routes: Array<[string, unknown]> = [
      ['/capabilities', undefined],
      ['/capacity-target', undefined],
      ['/snapshot', undefined],
      ['/presence/snapshot', undefined],
      ['/channel-runtime/snapshot', undefined],
      ['/channel-runtime/probe', {}],
      ['/channel-runtime/evict', {}],
      ['/users/tokens', {}],
      ['/channels', {}],
      ['/channels/subscribers', {}],
      ['/channels/subscribers/remove', {}],
    ];
    for (const headers of [{}, { authorization: 'Bearer wrong' }] as Record<string, string>[]) {
      for (const [path, body] of routes) {
        const r = await bench(path, body, headers);
        expect(r.status, path).toBe(401);
        expect(r.json).toEqual({ error: 'bench bearer token required', code: 'unauthorized' });
      }
    }
  });

  it('describes itself', async () => {
    const caps = await bench('/capabilities');
    expect(caps.json).toMatchObject({ enabled: true, version: 'bench/v1', limits: { max_batch_size: 3, max_payload_bytes: 4096 } });
    expect(caps.json.supports.users_tokens_batch).toBe(true);
    expect(caps.json.supports.terminal_fence_prepare).toBe(false);
    expect((await bench('/terminal-fence/prepare', { run_id: 'r', assignment_id: 'a', expected_sessions: 1 })).status).toBe(404);
    const target = await bench('/capacity-target');
    expect(target.json.gateway.ws_addr).toBe(t.ws);
  });

  it('users/tokens persists through the token service: the stored token connects', async () => {
    const r = await bench('/users/tokens', {
      run_id: ' run-1 ',
      batch_id: 'b1',
      users: [
        { uid: 'bench-u1', token: 'bt-1', device_flag: 1 },
        { uid: 'bench-u2', token: 'bt-2', device_flag: 1 },
      ],
    });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ run_id: 'run-1', batch_id: 'b1', accepted: 2 });
    const client = await connectRpc(t.ws, 'bench-u1', 'bt-1');
    client.close();
    expect((await bench('/snapshot')).json.counts.accepted_users).toBe(2);
  });

  it('creates channels, adds and removes subscribers, probes and evicts', async () => {
    const ch = await bench('/channels', {
      run_id: 'r',
      batch_id: 'c',
      channels: [
        { channel_id: 'r-p-0', channel_type: 2, large: true },
        { channel_id: 'r-p-1', channel_type: 2 },
      ],
    });
    expect(ch.json).toEqual({ run_id: 'r', batch_id: 'c', accepted: 2 });
    const add = await bench('/channels/subscribers', {
      run_id: 'r',
      batch_id: 's',
      items: [{ channel_id: 'r-p-0', channel_type: 2, subscribers: ['a', 'b', 'c'] }],
    });
    expect(add.json).toEqual({ run_id: 'r', batch_id: 's', accepted: 1, accepted_subscribers: 3 });
    const rm = await bench('/channels/subscribers/remove', {
      run_id: 'r',
      batch_id: 's2',
      items: [{ channel_id: 'r-p-0', channel_type: 2, subscribers: ['a'] }],
    });
    expect(rm.json).toEqual({ run_id: 'r', batch_id: 's2', accepted: 1, accepted_subscribers: 1 });
    expect((await bench('/snapshot')).json.counts).toMatchObject({
      accepted_channels: 2,
      accepted_subscriber_items: 1,
      accepted_subscribers: 3,
      removed_subscriber_items: 1,
      removed_subscribers: 1,
    });

    const probe = await bench('/channel-runtime/probe', { run_id: 'r', profile: 'p', channel_type: 2, range: { start: 0, end: 3 } });
    expect(probe.status).toBe(200);
    expect(probe.json).toMatchObject({ version: 'bench/v1', checked: 3, loaded_leader: 2, missing: ['r-p-2'] });
    const explicit = await bench('/channel-runtime/probe', { channels: [{ channel_id: 'r-p-1', channel_type: 2 }] });
    expect(explicit.json.channels[0]).toMatchObject({ channel_id: 'r-p-1', role: 'leader', status: 'loaded' });
    expect(
      (
        await bench('/channel-runtime/probe', {
          channels: [{ channel_id: 'x', channel_type: 2 }],
          run_id: 'r',
          profile: 'p',
          channel_type: 2,
          range: { start: 0, end: 1 },
        })
      ).status,
    ).toBe(400);
    const evict = await bench('/channel-runtime/evict', { run_id: 'r', profile: 'p', channel_type: 2, range: { start: 0, end: 2 } });
    expect(evict.json).toMatchObject({ requested: 2, evicted: 2 });
    const snap = await bench('/channel-runtime/snapshot?run_id=r&profile=p&channel_type=2&start=0&end=2');
    expect(snap.json).toMatchObject({ version: 'bench/v1', run_id: 'r', profile: 'p', active_follower: 0 });
    expect((await bench('/channel-runtime/snapshot?start=5&end=2&run_id=r&profile=p&channel_type=2')).status).toBe(400);
    expect((await bench('/presence/snapshot')).json).toMatchObject({ version: 'bench/v1', node_id: 1 });
  });

  it.each([
    ['/users/tokens', { batch_id: 'b', users: [] }, 400, 'run_id is required'],
    ['/users/tokens', { run_id: '  ', batch_id: 'b' }, 400, 'run_id is required'],
    ['/channels', { run_id: 'r', channels: [] }, 400, 'batch_id is required'],
    [
      '/users/tokens',
      { run_id: 'r', batch_id: 'b', items: [1, 2, 3, 4].map((i) => ({ uid: `u${i}`, token: 't' })) },
      400,
      'batch size 4 exceeds max 3',
    ],
    [
      '/channels/subscribers',
      { run_id: 'r', batch_id: 'b', items: [{ channel_id: 'g', channel_type: 2, reset: true, subscribers: [] }] },
      400,
      'bench/v1 subscribers reset=true is not supported',
    ],
    ['/channels', { run_id: 'r', batch_id: 'b', channels: [{ channel_id: 'g', channel_type: 2, ban: 1 }] }, 400, 'invalid request'],
    ['/users/tokens', 'not json', 400, 'invalid request'],
    [
      '/users/tokens',
      { run_id: 'r', batch_id: 'b', users: [{ uid: 'u', token: 'x'.repeat(5000) }] },
      413,
      'payload too large: max 4096 bytes',
    ],
  ])('%s answers %s for a bad body (%#)', async (path, body, status, msg) => {
    const r = await bench(path, body);
    expect(r.status).toBe(status);
    expect(r.json).toMatchObject({ status, msg });
  });

  it('rejects every bench request during restore maintenance while top and health stay up', async () => {
    t.server.ops.maintenance.active = true;
    try {
      const r = await bench('/capabilities');
      expect(r.status).toBe(503);
      expect(r.json).toEqual({ error: 'maintenance', message: 'restore maintenance is active' });
      expect((await bench('/users/tokens', { run_id: 'r', batch_id: 'b', users: [] }, {})).status).toBe(503);
      expect((await call(`${t.api}/healthz`)).status).toBe(200);
      expect([200, 503]).toContain((await call(`${t.api}/top/v1/snapshot`)).status);
    } finally {
      t.server.ops.maintenance.active = false;
    }
    expect((await bench('/capabilities')).status).toBe(200);
  });
});
