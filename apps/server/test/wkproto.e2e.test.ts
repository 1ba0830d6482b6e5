import { connect as tcpConnect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  clientKeyExchange,
  encodePacket,
  generateKeyPair,
  PacketType,
  WkprotoClient,
  WkprotoConnectError,
  WkprotoDecoder,
  type WkPacket,
  type WkSessionCrypto,
} from '@parley/protocol/wkproto';
import { connectRpc, post, startTestServer, storeToken, type TestServer } from './helpers.ts';

let t: TestServer;
const opened: WkprotoClient[] = [];

beforeAll(async () => {
  t = await startTestServer();
  for (const uid of ['w1', 'w2', 'j1']) await storeToken(t.api, uid, `tok-${uid}`, 1);
  await post(t.api, '/channel', { channel_id: 'wg', channel_type: 2, subscribers: ['w1', 'w2', 'j1'] });
});
afterAll(async () => {
  for (const c of opened) c.close();
  await t.close();
});

async function wk(url: string, uid: string, version = 5, token = `tok-${uid}`): Promise<WkprotoClient> {
  const c = new WkprotoClient({ url, uid, token, deviceFlag: 1, version });
  opened.push(c);
  await c.connect();
  return c;
}

const json = (v: unknown) => Buffer.from(JSON.stringify(v));

describe('WKProto over TCP and WebSocket', () => {
  it('exchanges encrypted person messages between a TCP (v6) and a WebSocket (v5) client', async () => {
    const a = await wk(t.tcp, 'w1', 6);
    const b = await wk(t.ws, 'w2', 5);
    const ack = await a.send({ channelId: 'w2', channelType: 1, payload: json({ type: 1, content: 'over tcp' }), clientMsgNo: 'wk-1' });
    expect(ack).toMatchObject({ reasonCode: 1, messageSeq: 1n, clientMsgNo: 'wk-1' });
    expect(ack.messageId).toBeGreaterThan(2n ** 53n);
    const got = await b.nextMessage();
    expect(got.packet).toMatchObject({
      fromUid: 'w1',
      channelId: 'w1',
      channelType: 1,
      messageId: ack.messageId,
      messageSeq: 1n,
      redDot: true,
    });
    expect(JSON.parse(got.payload.toString())).toEqual({ type: 1, content: 'over tcp' });

    const back = await b.send({ channelId: 'w1', channelType: 1, payload: json({ type: 1, content: 'over ws' }) });
    expect(back.messageSeq).toBe(2n);
    const atA = await a.nextMessage();
    expect(atA.packet).toMatchObject({ fromUid: 'w2', channelId: 'w2', messageId: back.messageId });
    expect(atA.payload.toString()).toBe('{"type":1,"content":"over ws"}');
  });

  it("encodes one delivery for each view: the peer's and the sender's other device's", async () => {
    await storeToken(t.api, 'w3', 'tok-w3', 1);
    await storeToken(t.api, 'w3', 'tok-w3-web', 2);
    await storeToken(t.api, 'w4', 'tok-w4', 1);
    const sender = await wk(t.tcp, 'w3', 6);
    const senderWeb = new WkprotoClient({ url: t.tcp, uid: 'w3', token: 'tok-w3-web', deviceFlag: 2, version: 6 });
    opened.push(senderWeb);
    await senderWeb.connect();
    const peer = await wk(t.tcp, 'w4', 6);
    const ack = await sender.send({
      channelId: 'w4',
      channelType: 1,
      payload: json({ type: 1, content: 'views' }),
      clientMsgNo: 'wk-views',
    });
    const atPeer = await peer.nextMessage();
    const atWeb = await senderWeb.nextMessage();
    expect(atPeer.packet).toMatchObject({ fromUid: 'w3', channelId: 'w3', messageId: ack.messageId, redDot: true });
    expect(atWeb.packet).toMatchObject({ fromUid: 'w3', channelId: 'w4', messageId: ack.messageId, redDot: false });
    expect(atPeer.payload.toString()).toBe('{"type":1,"content":"views"}');
    expect(atWeb.payload.toString()).toBe('{"type":1,"content":"views"}');
  });

  it('lets a WKProto client and a JSON-RPC client talk to each other, in a group too', async () => {
    const wkc = await wk(t.ws, 'w1');
    const rpc = await connectRpc(t.ws, 'j1', 'tok-j1');
    const ack = await wkc.send({ channelId: 'j1', channelType: 1, payload: json({ type: 1, content: 'to json-rpc' }) });
    const note = await rpc.nextNotification('recv');
    expect(note.params).toMatchObject({
      messageId: ack.messageId.toString(),
      fromUid: 'w1',
      channelId: 'w1',
      payload: { type: 1, content: 'to json-rpc' },
    });

    const sent = await rpc.request('send', { channelId: 'w1', channelType: 1, payload: { type: 1, content: 'to wkproto' } });
    const res = sent.result as { messageId: string };
    const got = await wkc.nextMessage();
    expect(got.packet.messageId).toBe(BigInt(res.messageId));
    expect(JSON.parse(got.payload.toString())).toEqual({ type: 1, content: 'to wkproto' });

    const g = await rpc.request('send', { channelId: 'wg', channelType: 2, payload: { type: 1, content: 'group hello' } });
    const inGroup = await wkc.nextMessage();
    expect(inGroup.packet).toMatchObject({
      channelId: 'wg',
      channelType: 2,
      fromUid: 'j1',
      messageId: BigInt((g.result as { messageId: string }).messageId),
    });
    rpc.close();
  });

  it('refuses a wrong token with CONNACK reason 2', async () => {
    const err = await wk(t.tcp, 'w1', 5, 'nope').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WkprotoConnectError);
    expect((err as WkprotoConnectError).reasonCode).toBe(2);
  });

  it('refuses a user whose person channel is banned with CONNACK reason 19, and takes them back once unbanned', async () => {
    await storeToken(t.api, 'wb', 'tok-wb', 1);
    await post(t.api, '/channel/info', { channel_id: 'wb', channel_type: 1, ban: 1 });
    for (const url of [t.tcp, t.ws]) {
      const err = await wk(url, 'wb').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WkprotoConnectError);
      expect((err as WkprotoConnectError).reasonCode).toBe(19);
    }
    await post(t.api, '/channel/info', { channel_id: 'wb', channel_type: 1, ban: 0 });
    const c = await wk(t.tcp, 'wb');
    c.close();
  });
});

/** A raw TCP client that does the handshake itself, to control how bytes are split. */
async function rawSession(): Promise<{ socket: Socket; crypto: WkSessionCrypto; packets: WkPacket[]; waitFor(n: number): Promise<void> }> {
  const port = Number(t.tcp.split(':').at(-1));
  const socket = tcpConnect(port, '127.0.0.1');
  socket.setNoDelay(true);
  const decoder = new WkprotoDecoder({ version: 6 });
  const packets: WkPacket[] = [];
  const waiters: Array<() => void> = [];
  socket.on('data', (chunk) => {
    decoder.push(chunk, (p) => packets.push(p));
    waiters.splice(0).forEach((w) => w());
  });
  const waitFor = async (n: number) => {
    const deadline = Date.now() + 5000;
    while (packets.length < n) {
      if (Date.now() > deadline) throw new Error(`only ${packets.length} of ${n} packets`);
      await new Promise<void>((r) => {
        waiters.push(r);
        setTimeout(r, 50);
      });
    }
  };
  await new Promise<void>((r) => socket.once('connect', () => r()));
  const keys = generateKeyPair();
  socket.write(
    encodePacket(
      {
        type: PacketType.CONNECT,
        version: 6,
        deviceFlag: 1,
        deviceId: 'raw',
        uid: 'w1',
        token: 'tok-w1',
        clientTimestamp: BigInt(Date.now()),
        clientKey: keys.publicKey,
      },
      6,
    ),
  );
  await waitFor(1);
  const connack = packets.shift()!;
  if (connack.type !== PacketType.CONNACK || connack.reasonCode !== 1) throw new Error('connect failed');
  return { socket, crypto: clientKeyExchange(keys.privateKey, connack.serverKey, connack.salt), packets, waitFor };
}

function sendStream(crypto: WkSessionCrypto): Buffer {
  const parts: Buffer[] = [];
  for (let i = 0; i < 3; i++) {
    const send = crypto.sealSend({
      type: PacketType.SEND,
      redDot: true,
      setting: 0,
      clientSeq: i + 1,
      clientMsgNo: `split-${i}`,
      channelId: 'w2',
      channelType: 1,
      expire: 0,
      msgKey: '',
      payload: json({ type: 1, content: `split ${i}` }),
    });
    parts.push(encodePacket(send, 6));
    if (i === 1) parts.push(encodePacket({ type: PacketType.PING }, 6));
  }
  return Buffer.concat(parts);
}

describe('the TCP decoder path', () => {
  it('gets the same SENDACKs however the byte stream is split: whole, per byte, and at every boundary', async () => {
    const outcomes: string[] = [];
    const run = async (write: (socket: Socket, stream: Buffer) => Promise<void>) => {
      const s = await rawSession();
      await write(s.socket, sendStream(s.crypto));
      await s.waitFor(4);
      const acks = s.packets.flatMap((p) =>
        p.type === PacketType.SENDACK ? [`${p.clientSeq}:${p.reasonCode}:${p.messageId}:${p.messageSeq}`] : [],
      );
      const pongs = s.packets.filter((p) => p.type === PacketType.PONG).length;
      // PONG is answered at once while SENDACKs wait for their commit, so only their own order is fixed.
      outcomes.push(`${acks.join(',')} pongs=${pongs}`);
      s.socket.destroy();
    };
    await run(async (socket, stream) => void socket.write(stream));
    await run(async (socket, stream) => {
      for (const byte of stream) {
        socket.write(Buffer.of(byte));
        await new Promise((r) => setImmediate(r));
      }
    });
    const length = sendStream((await rawSession()).crypto).length;
    for (let cut = 1; cut < length; cut++) {
      await run(async (socket, stream) => {
        socket.write(stream.subarray(0, cut));
        await new Promise((r) => setImmediate(r));
        socket.write(stream.subarray(cut));
      });
    }
    expect(outcomes.length).toBe(length + 1);
    expect([...new Set(outcomes)]).toEqual([outcomes[0]]);
    expect(outcomes[0]).toMatch(/^1:1:\d+:\d+,2:1:\d+:\d+,3:1:\d+:\d+ pongs=1$/);
  }, 60_000);

  it('writes the SENDACK of a SEND refused at once after those of the SENDs before it', async () => {
    const s = await rawSession();
    const seal = (clientSeq: number) =>
      s.crypto.sealSend({
        type: PacketType.SEND,
        setting: 0,
        clientSeq,
        clientMsgNo: `order-${clientSeq}`,
        channelId: 'w2',
        channelType: 1,
        expire: 0,
        msgKey: '',
        payload: json({ order: clientSeq }),
      });
    const first = seal(1);
    // Not sealed again (the session's cipher chain only moves for SENDs that verify): refused with reason 8 before any commit.
    const refused = { ...first, clientSeq: 2, clientMsgNo: 'order-2', msgKey: '0'.repeat(32) };
    const third = seal(3);
    s.socket.write(Buffer.concat([encodePacket(first, 6), encodePacket(refused, 6), encodePacket(third, 6)]));
    await s.waitFor(3);
    expect(s.packets.map((p) => (p.type === PacketType.SENDACK ? `${p.clientSeq}:${p.reasonCode}` : `type ${p.type}`))).toEqual([
      '1:1',
      '2:8',
      '3:1',
    ]);
    s.socket.destroy();
  });

  it('answers a SEND whose msg_key does not verify with reason 8 and stores nothing', async () => {
    const s = await rawSession();
    const good = s.crypto.sealSend({
      type: PacketType.SEND,
      setting: 0,
      clientSeq: 9,
      clientMsgNo: 'bad-key',
      channelId: 'w2',
      channelType: 1,
      expire: 0,
      msgKey: '',
      payload: json({ x: 1 }),
    });
    s.socket.write(encodePacket({ ...good, msgKey: '0'.repeat(32) }, 6));
    await s.waitFor(1);
    expect(s.packets[0]).toMatchObject({ type: PacketType.SENDACK, clientSeq: 9, reasonCode: 8, messageId: 0n });
    const sync = await post(t.api, '/channel/messagesync', {
      login_uid: 'w1',
      channel_id: 'w2',
      channel_type: 1,
      pull_mode: 1,
      limit: 1000,
    });
    expect(sync.json.messages.some((m: { client_msg_no: string }) => m.client_msg_no === 'bad-key')).toBe(false);
    s.socket.destroy();
  });

  it('closes a connection whose first packet is not CONNECT, and one that sends garbage', async () => {
    for (const bytes of [encodePacket({ type: PacketType.PING }, 5), Buffer.from([0xf0, 0x01, 0x00])]) {
      const port = Number(t.tcp.split(':').at(-1));
      const socket = tcpConnect(port, '127.0.0.1');
      await new Promise<void>((r) => socket.once('connect', () => r()));
      socket.write(bytes);
      await new Promise<void>((r) => socket.once('close', () => r()));
    }
    expect((await wk(t.tcp, 'w2')).version).toBeDefined();
  });

  it('refuses a CONNECT without a client key with reason 21', async () => {
    const port = Number(t.tcp.split(':').at(-1));
    const socket = tcpConnect(port, '127.0.0.1');
    const decoder = new WkprotoDecoder({ version: 5 });
    const got = new Promise<WkPacket>((r) => socket.on('data', (c) => decoder.push(c, r)));
    socket.write(
      encodePacket(
        {
          type: PacketType.CONNECT,
          version: 5,
          deviceFlag: 1,
          deviceId: 'd',
          uid: 'w1',
          token: 'tok-w1',
          clientTimestamp: 0n,
          clientKey: '',
        },
        5,
      ),
    );
    expect(await got).toMatchObject({ type: PacketType.CONNACK, reasonCode: 21 });
    socket.destroy();
  });

  it('sends DISCONNECT 12 to a session revoked by device_quit', async () => {
    await storeToken(t.api, 'w9', 'tok-w9', 1);
    const c = await wk(t.tcp, 'w9');
    const disconnect = new Promise((r) => c.on('disconnect', r));
    await post(t.api, '/user/device_quit', { uid: 'w9', device_flag: 1 });
    expect(await disconnect).toMatchObject({ reasonCode: 12 });
  });
});
