import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JsonRpcClient } from '@parley/protocol/jsonrpc';
import { WkprotoClient } from '@parley/protocol/wkproto';
import { call } from './ops-helpers.ts';
import { connectRpc, startTestServer, storeToken, type TestServer } from './helpers.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({
    PARLEY_DELIVERY_RETRY_INTERVAL: '300ms',
    PARLEY_DELIVERY_RETRY_MAX_COUNT: '2',
    PARLEY_DELIVERY_PENDING_ACK_MAX_PER_SESSION: '3',
  });
  for (const uid of ['r-alice', 'r-bob', 'r-carol', 'r-dave', 'd-eve', 'w-frank']) await storeToken(t.api, uid, `tok-${uid}`);
});
afterAll(() => t.close());

async function sendTo(from: JsonRpcClient, to: string, n: number): Promise<string> {
  const r = await from.request('send', { channelId: to, channelType: 1, payload: { n }, clientMsgNo: `${to}-${n}-${Math.random()}` });
  const result = r.result as { reasonCode: number; messageId: string };
  expect(result.reasonCode).toBe(1);
  return result.messageId;
}

describe('RECV redelivery', { timeout: 15_000 }, () => {
  it('resends an unacked RECV to the same session, and not one that was acked', async () => {
    const alice = await connectRpc(t.ws, 'r-alice', 'tok-r-alice');
    const bob = await connectRpc(t.ws, 'r-bob', 'tok-r-bob');
    const acked = await sendTo(alice, 'r-bob', 1);
    const unacked = await sendTo(alice, 'r-bob', 2);
    const first = await bob.nextNotification('recv');
    expect(first.params.messageId).toBe(acked);
    bob.notify('recvack', { messageId: acked, messageSeq: first.params.messageSeq });
    expect((await bob.nextNotification('recv')).params.messageId).toBe(unacked);
    // The unacked one comes again; the acked one was delivered earlier, so it would have come back first.
    const again = await bob.nextNotification('recv', 3000);
    expect(again.params.messageId).toBe(unacked);
    expect(bob.pending('recv')).toEqual([]);
    bob.notify('recvack', { messageId: unacked, messageSeq: again.params.messageSeq });
    alice.close();
    bob.close();
  });

  it('resends to a WKProto session too, encrypted for it and marked DUP, until it acks', async () => {
    const alice = await connectRpc(t.ws, 'r-alice', 'tok-r-alice');
    const frank = new WkprotoClient({ url: t.tcp, uid: 'w-frank', token: 'tok-w-frank', deviceFlag: 1, version: 6, autoRecvAck: false });
    await frank.connect();
    const id = await sendTo(alice, 'w-frank', 1);
    const first = await frank.nextMessage();
    expect([first.packet.messageId.toString(), first.packet.dup ?? false]).toEqual([id, false]);
    const again = await frank.nextMessage(3000);
    expect([again.packet.messageId.toString(), again.packet.dup]).toEqual([id, true]);
    expect(JSON.parse(again.payload.toString())).toEqual({ n: 1 });
    frank.recvAck(again.packet.messageId, again.packet.messageSeq);
    frank.close();
    alice.close();
  });

  it('closes a session that never acks after the last resend', async () => {
    const carol = await connectRpc(t.ws, 'r-carol', 'tok-r-carol');
    const dave = await connectRpc(t.ws, 'r-dave', 'tok-r-dave');
    const id = await sendTo(carol, 'r-dave', 1);
    const seen: string[] = [];
    for (let i = 0; i < 3; i++) seen.push((await dave.nextNotification('recv', 4000)).params.messageId as string);
    expect(seen).toEqual([id, id, id]);
    expect(await dave.closed).toMatchObject({ code: 1008, reason: 'recv not acknowledged' });
    carol.close();
  });

  it('closes a session whose window of unacked RECVs is full', async () => {
    const carol = await connectRpc(t.ws, 'r-carol', 'tok-r-carol');
    const dave = await connectRpc(t.ws, 'r-dave', 'tok-r-dave');
    for (let n = 0; n < 4; n++) await sendTo(carol, 'r-dave', 10 + n);
    expect(await dave.closed).toMatchObject({ code: 1008, reason: 'ack window full' });
    carol.close();
  });
});

describe('deep and odd input', { timeout: 15_000 }, () => {
  const deep = '['.repeat(50_000) + ']'.repeat(50_000);

  it('answers deep JSON on HTTP with 400, never 500', async () => {
    const event = await call(`${t.api}/message/event`, { body: `{"client_msg_no":"x","event_id":"e","event_type":"t","data":${deep}}` });
    expect([event.status, event.json?.code]).toEqual([400, 'invalid_request']);
    const shallower = '['.repeat(10_000) + ']'.repeat(10_000);
    for (const path of ['/message/send', '/user/token', '/channel']) {
      const r = await call(`${t.api}${path}`, { body: `{"a":${shallower}}` });
      expect([path, r.status]).toEqual([path, 400]);
    }
  });

  it('answers a deep JSON-RPC frame with -32600 and keeps the session', async () => {
    const eve = await connectRpc(t.ws, 'd-eve', 'tok-d-eve');
    eve.sendRaw(`{"method":"send","id":"deep","params":{"payload":${deep}}}`);
    await new Promise<void>((resolve) => {
      const check = () => (eve.orphans.some((o) => o.error?.code === -32600) ? resolve() : setTimeout(check, 20));
      check();
    });
    expect(eve.orphans.find((o) => o.error?.code === -32600)?.error?.message).toMatch(/nested deeper than 64/);
    expect((await eve.request('ping', {})).result).toBeNull();
    eve.close();
  });

  it('answers a first text frame that is not JSON with -32700 at once', async () => {
    const c = await JsonRpcClient.open(t.ws);
    c.sendRaw('hello');
    const closedAt = await c.closed;
    expect(c.orphans[0]?.error).toMatchObject({ code: -32700 });
    expect(closedAt.code).toBe(1008);
  });
});
