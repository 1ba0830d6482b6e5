import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JsonRpcClient } from '@parley/protocol/jsonrpc';
import { connectRpc, post, startTestServer, storeToken, type TestServer } from './helpers.ts';

let t: TestServer;
const MAX_FRAME = 4096;

beforeAll(async () => {
  t = await startTestServer({ PARLEY_GATEWAY_MAX_FRAME_BYTES: String(MAX_FRAME), PARLEY_GATEWAY_AUTH_TIMEOUT: '1s' });
  await storeToken(t.api, 'u1', 'tok-1', 1);
  await storeToken(t.api, 'u2', 'tok-2', 1);
});
afterAll(() => t.close());

/** The server still takes a normal connect and send after whatever went before. */
async function stillServing(): Promise<void> {
  const c = await connectRpc(t.ws, 'u1', 'tok-1');
  const r = await c.request('send', { channelId: 'u2', channelType: 1, payload: { ok: true } });
  expect((r.result as { reasonCode: number }).reasonCode).toBe(1);
  c.close();
}

async function storedCount(): Promise<number> {
  const r = await post(t.api, '/channel/messagesync', { login_uid: 'u1', channel_id: 'u2', channel_type: 1, pull_mode: 1, limit: 10000 });
  return r.json.messages.length;
}

async function refusedConnect(params: Record<string, unknown>): Promise<void> {
  const before = t.server.presence.connections;
  const c = await JsonRpcClient.open(t.ws);
  const r = await c.request('connect', params);
  expect(r.result).toBeUndefined();
  expect(r.error).toEqual({ code: 2, message: 'ReasonAuthFail' });
  expect((await c.nextNotification('disconnect')).params).toEqual({ reasonCode: 2, reason: 'ReasonAuthFail' });
  expect((await c.closed).code).toBe(1008);
  expect(t.server.presence.connections).toBe(before);
}

describe('connect is refused with ReasonAuthFail and the socket closed', () => {
  it('for a wrong token', () => refusedConnect({ uid: 'u1', token: 'tok-x', deviceFlag: 1 }));
  it('for an empty token', () => refusedConnect({ uid: 'u1', token: '', deviceFlag: 1 }));
  it('for a device class with no stored token', () => refusedConnect({ uid: 'u1', token: 'tok-1', deviceFlag: 0 }));
  it('for an unknown device class', () => refusedConnect({ uid: 'u1', token: 'tok-1', device_flag: 7 }));
  it('for an unknown uid', () => refusedConnect({ uid: 'nobody', token: 'tok-1', deviceFlag: 1 }));
  it('and the server keeps serving', stillServing);
});

describe('connect of a user whose person channel is banned', () => {
  async function connectResult(uid: string, token: string): Promise<{ result?: unknown; error?: unknown }> {
    const c = await JsonRpcClient.open(t.ws);
    const r = await c.request('connect', { uid, token, deviceFlag: 1 });
    c.close();
    return r;
  }

  it('is refused with ReasonBan (19) while the ban holds, from the store or from the channel cache', async () => {
    await storeToken(t.api, 'ub', 'tok-b', 1);
    await post(t.api, '/channel/info', { channel_id: 'ub', channel_type: 1, ban: 1 });
    expect((await connectResult('ub', 'tok-b')).error).toEqual({ code: 19, message: 'ReasonBan' });
    // A message to ub loads its person channel into the cache; the ban still holds.
    const u1 = await connectRpc(t.ws, 'u1', 'tok-1');
    await u1.request('send', { channelId: 'ub', channelType: 1, payload: { n: 1 } });
    u1.close();
    expect((await connectResult('ub', 'tok-b')).error).toEqual({ code: 19, message: 'ReasonBan' });
    await post(t.api, '/channel/info', { channel_id: 'ub', channel_type: 1, ban: 0 });
    expect((await connectResult('ub', 'tok-b')).result).toMatchObject({ reasonCode: 1 });
  });
});

describe('malformed input gets a JSON-RPC error object, stores nothing and closes only that session', () => {
  async function rejects(frames: Array<string | Buffer>, code: number, id: string | null = null): Promise<void> {
    const before = await storedCount();
    const c = await JsonRpcClient.open(t.ws);
    for (const f of frames) c.sendRaw(f);
    const closed = await c.closed;
    const errors = c.orphans.filter((o) => o.error);
    expect(errors.at(-1)?.error?.code).toBe(code);
    expect(errors.at(-1)?.id).toBe(id);
    expect(closed.code).toBe(1008);
    expect(await storedCount()).toBe(before);
    await stillServing();
  }

  it('a request before connect', () =>
    rejects(
      [JSON.stringify({ jsonrpc: '2.0', id: 's1', method: 'send', params: { channelId: 'u2', channelType: 1, payload: {} } })],
      -32600,
      's1',
    ));
  it('invalid JSON', () => rejects(['{"jsonrpc":"2.0", nope'], -32700));
  it('a wrong jsonrpc version', () => rejects(['{"jsonrpc":"1.0","id":"v","method":"ping"}'], -32600, 'v'));
  it('an unknown method after connect', async () => {
    const c = await connectRpc(t.ws, 'u1', 'tok-1');
    const r = await c.request('teleport', {});
    expect(r.error?.code).toBe(-32601);
    expect((await c.closed).code).toBe(1008);
    await stillServing();
  });
  it('subscribe, which the product rejects', async () => {
    const c = await connectRpc(t.ws, 'u1', 'tok-1');
    const r = await c.request('subscribe', { subNo: '1', channelId: 'g', channelType: 2 });
    expect(r.error).toMatchObject({ code: -32601, message: 'subscribe is not supported' });
    await c.closed;
  });
  it('send params of the wrong type', async () => {
    const before = await storedCount();
    const c = await connectRpc(t.ws, 'u1', 'tok-1');
    const r = await c.request('send', { channelId: 'u2', channelType: 'one', payload: {} });
    expect(r.error?.code).toBe(-32602);
    expect(r.error?.message).toMatch(/channelType/);
    await c.closed;
    expect(await storedCount()).toBe(before);
  });
  it('a frame over gateway.max_frame_bytes closes with 1009', async () => {
    const before = await storedCount();
    const c = await connectRpc(t.ws, 'u1', 'tok-1');
    c.sendRaw(JSON.stringify({ id: 'big', method: 'send', params: { channelId: 'u2', channelType: 1, payload: 'x'.repeat(MAX_FRAME) } }));
    expect((await c.closed).code).toBe(1009);
    expect(await storedCount()).toBe(before);
    await stillServing();
  });
});

describe('session life', () => {
  it('answers ping with a null result under the same id', async () => {
    const c = await connectRpc(t.ws, 'u1', 'tok-1');
    const r = await c.request('ping', {});
    expect(r).toEqual({ id: expect.stringMatching(/^r\d+$/), result: null, error: undefined });
    c.close();
  });

  it('remembers a delivered recv until its recvack', async () => {
    const receiver = await connectRpc(t.ws, 'u2', 'tok-2');
    const sender = await connectRpc(t.ws, 'u1', 'tok-1');
    const session = [...t.server.presence.sessionsOf('u2')!][0] as unknown as { pendingAckCount: number };
    await sender.request('send', { channelId: 'u2', channelType: 1, payload: { ack: 'me' } });
    const recv = await receiver.nextNotification('recv');
    expect(session.pendingAckCount).toBe(1);
    receiver.notify('recvack', { messageId: recv.params.messageId, messageSeq: recv.params.messageSeq });
    expect((await receiver.request('ping', null)).result).toBeNull();
    expect(session.pendingAckCount).toBe(0);
    receiver.close();
    sender.close();
  });

  it('closes a connection that never sends connect (gateway.auth_timeout)', async () => {
    const c = await JsonRpcClient.open(t.ws);
    const started = Date.now();
    const closed = await c.closed;
    expect(closed).toEqual({ code: 1008, reason: 'auth timeout' });
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it('device_quit tells the session (DISCONNECT 12), closes it and refuses the old token', async () => {
    await storeToken(t.api, 'q1', 'q-tok', 1);
    const c = await connectRpc(t.ws, 'q1', 'q-tok');
    const r = await post(t.api, '/user/device_quit', { uid: 'q1', device_flag: 1 });
    expect(r.json).toEqual({ status: 200 });
    expect((await c.nextNotification('disconnect')).params).toEqual({ reasonCode: 12, reason: 'login in other device' });
    expect((await c.closed).code).toBe(1000);
    const again = await JsonRpcClient.open(t.ws);
    expect((await again.request('connect', { uid: 'q1', token: 'q-tok', deviceFlag: 1 })).error).toMatchObject({ code: 2 });
  }, 10_000);

  it('a master login replaces the other device of its class', async () => {
    await storeToken(t.api, 'm1', 'm-tok', 1, 1);
    const old = await connectRpc(t.ws, 'm1', 'm-tok', 1, 'dev-a');
    const fresh = await connectRpc(t.ws, 'm1', 'm-tok', 1, 'dev-b');
    expect((await old.nextNotification('disconnect')).params.reasonCode).toBe(12);
    const r = await fresh.request('ping', null);
    expect(r.result).toBeNull();
    fresh.close();
  });
});
