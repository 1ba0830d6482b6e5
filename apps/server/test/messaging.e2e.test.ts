import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JsonRpcClient } from '@parley/protocol/jsonrpc';
import { connectRpc, post, rawMessageIds, spawnServer, storeToken, tempDir, testEnv, type SpawnedServer } from './helpers.ts';
import { STORE_DRIVERS, storeEnv } from '../../../test-support/stores.ts';

const payloadOf = (text: string) => ({ type: 1, content: text });

interface SendResult {
  messageId: string;
  messageSeq: number;
  reasonCode: number;
}

async function send(client: JsonRpcClient, params: Record<string, unknown>): Promise<SendResult> {
  const r = await client.request('send', params);
  expect(r.error).toBeUndefined();
  return r.result as SendResult;
}

describe.each(STORE_DRIVERS)('the real server over JSON-RPC and HTTP (store: %s)', (driver) => {
  const store = storeEnv(driver);
  let srv: SpawnedServer;
  let alice: JsonRpcClient;
  let aliceWeb2: JsonRpcClient;
  let bob: JsonRpcClient;

  beforeAll(async () => {
    srv = await spawnServer(testEnv(tempDir(), store.env));
    await storeToken(srv.api, 'alice', 'alice-secret-1', 1);
    await storeToken(srv.api, 'alice', 'alice-secret-2', 2);
    await storeToken(srv.api, 'bob', 'bob-secret', 1);
    alice = await connectRpc(srv.ws, 'alice', 'alice-secret-1', 1, 'alice-web');
    aliceWeb2 = await connectRpc(srv.ws, 'alice', 'alice-secret-2', 2, 'alice-pc');
    bob = await connectRpc(srv.ws, 'bob', 'bob-secret', 1, 'bob-web');
  }, 30_000);

  afterAll(async () => {
    for (const c of [alice, aliceWeb2, bob]) c?.close();
    srv?.proc.kill('SIGTERM');
    await srv?.exited;
    await store.drop();
  });

  it('delivers a person message with an exact 64-bit id to the peer and the sender’s other device', async () => {
    const first = await send(alice, { clientMsgNo: 'p-1', channelId: 'bob', channelType: 1, payload: payloadOf('hi bob') });
    expect(first.reasonCode).toBe(1);
    expect(first.messageId).toMatch(/^\d{16,20}$/);
    expect(BigInt(first.messageId)).toBeGreaterThan(2n ** 53n);
    expect(first.messageSeq).toBe(1);

    const atBob = await bob.nextNotification('recv');
    expect(atBob.params).toMatchObject({
      messageId: first.messageId,
      messageSeq: 1,
      fromUid: 'alice',
      channelId: 'alice',
      channelType: 1,
      clientMsgNo: 'p-1',
      payload: payloadOf('hi bob'),
    });
    expect(atBob.params.header).toEqual({});
    const atOtherDevice = await aliceWeb2.nextNotification('recv');
    expect(atOtherDevice.params).toMatchObject({ messageId: first.messageId, channelId: 'bob', fromUid: 'alice' });
    expect(alice.pending('recv')).toHaveLength(0);

    const reply = await send(bob, {
      client_msg_no: 'p-2',
      channel_id: 'alice',
      channel_type: 1,
      payload: payloadOf('hi alice'),
      header: { redDot: true },
    });
    expect(reply.messageSeq).toBe(2);
    expect(BigInt(reply.messageId)).toBeGreaterThan(BigInt(first.messageId));
    const atAlice = await alice.nextNotification('recv');
    expect(atAlice.params).toMatchObject({
      messageId: reply.messageId,
      messageSeq: 2,
      fromUid: 'bob',
      channelId: 'bob',
      header: { redDot: true },
    });
    expect((await aliceWeb2.nextNotification('recv')).params.messageId).toBe(reply.messageId);
  });

  it('delivers text outside ASCII (payload, clientMsgNo, uid) as the same characters in valid UTF-8', async () => {
    const content = 'héllo 中文 😀';
    const sent = await send(alice, { clientMsgNo: 'ü-1', channelId: 'bob', channelType: 1, payload: payloadOf(content) });
    const atBob = await bob.nextNotification('recv');
    expect(atBob.params).toMatchObject({ messageId: sent.messageId, clientMsgNo: 'ü-1', payload: payloadOf(content) });
    await aliceWeb2.nextNotification('recv');
    // Plain ASCII right after: the next frame is read whole, so the one before ended where its length said.
    const plain = await send(alice, { clientMsgNo: 'a-1', channelId: 'bob', channelType: 1, payload: payloadOf('plain') });
    expect((await bob.nextNotification('recv')).params).toMatchObject({ messageId: plain.messageId, payload: payloadOf('plain') });
    await aliceWeb2.nextNotification('recv');
  });

  it('answers a repeated clientMsgNo with the first id and seq and delivers nothing new', async () => {
    const params = { clientMsgNo: 'dup-1', channelId: 'bob', channelType: 1, payload: payloadOf('once') };
    const first = await send(alice, params);
    await bob.nextNotification('recv');
    await aliceWeb2.nextNotification('recv');
    const again = await send(alice, params);
    expect(again).toEqual(expect.objectContaining({ messageId: first.messageId, messageSeq: first.messageSeq, reasonCode: 1 }));
    const marker = await send(alice, { clientMsgNo: 'after-dup', channelId: 'bob', channelType: 1, payload: payloadOf('marker') });
    expect(marker.messageSeq).toBe(first.messageSeq + 1);
    expect((await bob.nextNotification('recv')).params.clientMsgNo).toBe('after-dup');
    expect((await aliceWeb2.nextNotification('recv')).params.clientMsgNo).toBe('after-dup');
  });

  it('fans a group message out to every subscriber and orders seqs per channel', async () => {
    const created = await post(srv.api, '/channel', { channel_id: 'g1', channel_type: 2, subscribers: ['alice', 'bob'] });
    expect(created.json).toEqual({ status: 200 });
    const seqs: number[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await send(bob, { clientMsgNo: `g-${i}`, channelId: 'g1', channelType: 2, payload: payloadOf(`group ${i}`) });
      expect(r.reasonCode).toBe(1);
      seqs.push(r.messageSeq);
      const atAlice = await alice.nextNotification('recv');
      expect(atAlice.params).toMatchObject({
        messageId: r.messageId,
        messageSeq: r.messageSeq,
        channelId: 'g1',
        channelType: 2,
        fromUid: 'bob',
        payload: payloadOf(`group ${i}`),
      });
      expect((await aliceWeb2.nextNotification('recv')).params.messageId).toBe(r.messageId);
    }
    expect(seqs).toEqual([1, 2, 3]);
    expect(bob.pending('recv')).toHaveLength(0);
    // At once, before the store's writer applies the senders' latest-send marks: the sender has read its own.
    const unread = async (uid: string) =>
      (await post(srv.api, '/conversation/list', { uid })).json.conversations.find((c: { channel_id: string }) => c.channel_id === 'g1')
        ?.unread;
    expect(await unread('bob')).toBe(0);
    expect(await unread('alice')).toBe(3);
  });

  it('refuses a group send from a non-member with reason 3 and stores nothing', async () => {
    await storeToken(srv.api, 'carol', 'carol-secret', 1);
    const carol = await connectRpc(srv.ws, 'carol', 'carol-secret');
    const r = await send(carol, { clientMsgNo: 'c-1', channelId: 'g1', channelType: 2, payload: payloadOf('let me in') });
    expect(r).toMatchObject({ reasonCode: 3, messageId: '0', messageSeq: 0 });
    carol.close();
    const sync = await post(srv.api, '/channel/messagesync', {
      login_uid: 'alice',
      channel_id: 'g1',
      channel_type: 2,
      pull_mode: 1,
      limit: 100,
    });
    expect(sync.json.messages.map((m: { client_msg_no: string }) => m.client_msg_no)).toEqual(['g-0', 'g-1', 'g-2']);
  });

  it('serves backend sends over HTTP with an exact integer message_id, delivered to both devices', async () => {
    const payload = Buffer.from(JSON.stringify(payloadOf('from the backend'))).toString('base64');
    const r = await post(srv.api, '/message/send', {
      from_uid: 'bob',
      channel_id: 'alice',
      channel_type: 1,
      payload,
      client_msg_no: 'http-1',
    });
    expect(r.status).toBe(200);
    expect(r.json.reason).toBe(1);
    const [id] = rawMessageIds(r.text);
    expect(BigInt(id!)).toBeGreaterThan(2n ** 53n);
    for (const device of [alice, aliceWeb2]) {
      const n = await device.nextNotification('recv');
      expect(n.params).toMatchObject({ messageId: id, fromUid: 'bob', clientMsgNo: 'http-1' });
    }
    const sync = await post(srv.api, '/channel/messagesync', { login_uid: 'alice', channel_id: 'bob', channel_type: 1, pull_mode: 1 });
    expect(rawMessageIds(sync.text)).toContain(id);
    const last = sync.json.messages.at(-1);
    expect(last).toMatchObject({ message_idstr: id, from_uid: 'bob', channel_id: 'bob', client_msg_no: 'http-1', payload });
  });
});
