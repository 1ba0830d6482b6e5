import { connect as tcpConnect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JsonRpcClient } from '@parley/protocol/jsonrpc';
import { encodePacket, generateKeyPair, PacketType } from '@parley/protocol/wkproto';
import { connectRpc, startTestServer, storeToken, type TestServer } from './helpers.ts';
import { call, waitFor } from './ops-helpers.ts';

/** Realtime answers the contract fixes (realtime.md §2.3, §3; http-api.md §5 alert kinds), with real frames. */
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ PARLEY_TOP_COLLECT_INTERVAL: '100ms' });
  await storeToken(t.api, 'rt-a', 'tok-a', 1);
  await storeToken(t.api, 'rt-b', 'tok-b', 1);
});
afterAll(() => t.close());

/** Writes `bytes` on a fresh TCP connection and returns everything the server sent until it closed. */
function tcpExchange(bytes: Uint8Array, server: TestServer = t): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = tcpConnect(Number(server.tcp.split(':').at(-1)), '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks)));
    socket.once('connect', () => socket.write(bytes));
  });
}

const connectFrame = (version: number, token: string) =>
  encodePacket(
    {
      type: PacketType.CONNECT,
      version: Math.min(Math.max(version, 1), 6),
      deviceFlag: 1,
      deviceId: 'rt',
      uid: 'rt-a',
      token,
      clientTimestamp: BigInt(Date.now()),
      clientKey: generateKeyPair().publicKey,
    },
    6,
  );

describe('JSON-RPC recvack before connect', () => {
  it('is ignored: the session stays open and connect still succeeds', async () => {
    const c = await JsonRpcClient.open(t.ws);
    c.notify('recvack', { messageId: '123', messageSeq: 1 });
    c.notify('recvack', { messageId: 'not a number' });
    c.notify('recvack', null);
    const r = await c.request('connect', { uid: 'rt-a', token: 'tok-a', deviceFlag: 1 });
    expect(r.result).toMatchObject({ reasonCode: 1 });
    expect(c.orphans).toEqual([]);
    expect((await c.request('ping', {})).result).toBeNull();
    c.close();
  });
});

describe('JSON-RPC request ids', () => {
  it('echoes ids far longer than 128 characters', async () => {
    const c = await JsonRpcClient.open(t.ws);
    const longId = `c-${'x'.repeat(1000)}`;
    const answer = new Promise<string>((resolve) => c.socket.once('message', (d) => resolve(d.toString())));
    c.sendRaw(JSON.stringify({ jsonrpc: '2.0', id: longId, method: 'connect', params: { uid: 'rt-b', token: 'tok-b', deviceFlag: 1 } }));
    const connack = JSON.parse(await answer);
    expect(connack).toMatchObject({ id: longId, result: { reasonCode: 1 } });
    const hugeId = 'p'.repeat(200_000);
    const pong = new Promise<string>((resolve) => c.socket.once('message', (d) => resolve(d.toString())));
    c.sendRaw(JSON.stringify({ jsonrpc: '2.0', id: hugeId, method: 'ping', params: {} }));
    expect(JSON.parse(await pong)).toEqual({ jsonrpc: '2.0', id: hugeId, result: null });
    c.close();
  });

  it('refuses an empty id with a message that says what an id must be', async () => {
    const c = await JsonRpcClient.open(t.ws);
    c.sendRaw(JSON.stringify({ jsonrpc: '2.0', id: '', method: 'ping' }));
    await c.closed;
    expect(c.orphans.at(-1)?.error).toEqual({ code: -32600, message: 'id must be a non-empty string or an integer' });
  });
});

describe('a failure CONNACK', () => {
  it.each([1, 2, 3, 4, 5, 6])('for a version %i client is encoded at V=5: node_id present', async (version) => {
    const bytes = await tcpExchange(connectFrame(version, 'wrong'));
    const hasServerVersion = version > 3;
    // time_diff i64, reason u8, server_key "", salt "", node_id u64 (+ server_version u8).
    const remaining = 8 + 1 + 2 + 2 + 8 + (hasServerVersion ? 1 : 0);
    expect(bytes.length).toBe(2 + remaining);
    expect(bytes[0]).toBe((PacketType.CONNACK << 4) | (hasServerVersion ? 1 : 0));
    expect(bytes[1]).toBe(remaining);
    let at = 2;
    if (hasServerVersion) expect(bytes[at++]).toBe(version);
    at += 8;
    expect(bytes[at]).toBe(2);
    expect(bytes.subarray(at + 1, at + 5)).toEqual(Buffer.from([0, 0, 0, 0]));
    expect(bytes.readBigUInt64BE(at + 5)).toBe(1n);
  });
});

describe('session_error alerts', () => {
  type Alert = { kind: string; severity: string; component: string; message: string; evidence: Record<string, string>; active: boolean };
  // A node of its own: the alert counts every error close inside its 10 s window.
  let own: TestServer;
  beforeAll(async () => {
    own = await startTestServer({ PARLEY_TOP_COLLECT_INTERVAL: '100ms' });
    await storeToken(own.api, 'rt-a', 'tok-a', 1);
  });
  afterAll(() => own.close());
  const sessionAlert = async () => {
    const r = await call(`${own.api}/top/v1/snapshot?window=2s&view=runtime`);
    return (r.json?.alerts?.active as Alert[] | undefined)?.find((a) => a.kind === 'session_error');
  };

  it('are raised from gateway close reasons: auth failures, then protocol errors', async () => {
    await waitFor(async () => ((await call(`${own.api}/top/v1/snapshot?window=2s`)).status === 200 ? true : undefined));
    expect(await sessionAlert()).toBeUndefined();
    for (let i = 0; i < 3; i++) await tcpExchange(connectFrame(5, 'wrong'), own);
    const auth = await waitFor(async () => {
      const a = await sessionAlert();
      return a?.evidence.close_reason === 'auth_failed' && a.evidence.count === '3' ? a : undefined;
    });
    expect(auth).toMatchObject({ severity: 'error', component: 'gateway', message: 'gateway session errors observed', active: true });
    expect(auth.evidence).toMatchObject({ protocol: 'wkproto', close_reason: 'auth_failed', class: 'auth', count: '3' });

    for (let i = 0; i < 5; i++) {
      const c = await JsonRpcClient.open(own.ws);
      c.sendRaw('{"jsonrpc":"2.0", nope');
      await c.closed;
    }
    const protocol = await waitFor(async () => {
      const a = await sessionAlert();
      return a?.evidence.close_reason === 'parse_error' ? a : undefined;
    });
    expect(protocol.evidence).toMatchObject({ protocol: 'jsonrpc', class: 'protocol', count: '5' });
  });

  it('count WKProto protocol errors and WebSocket frames over the limit', async () => {
    const before = new Map(t.server.ops.inputs.gatewayMetrics.sessionErrors);
    await tcpExchange(Buffer.from([0xf0, 0x01, 0x00]));
    const rpc = await connectRpc(t.ws, 'rt-a', 'tok-a');
    rpc.request('teleport', {}).catch(() => undefined);
    await rpc.closed;
    const now = t.server.ops.inputs.gatewayMetrics.sessionErrors;
    const delta = (key: string) => (now.get(key) ?? 0) - (before.get(key) ?? 0);
    expect(delta('wkproto.decode_error.protocol')).toBe(1);
    expect(delta('jsonrpc.method_not_found.protocol')).toBe(1);
  });
});
