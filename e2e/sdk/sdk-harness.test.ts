import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PacketType } from '@parley/protocol/wkproto';
import { startFakeGateway, type FakeGateway } from './fake-gateway.ts';
import { SdkConnectStatus, spawnSdkClient, type SdkClient } from './spawn-sdk-client.ts';

let gw: FakeGateway;
const clients: SdkClient[] = [];
const spawn = async (opts: { uid: string; protoVersion?: number; wsAddr?: string }): Promise<SdkClient> => {
  const c = await spawnSdkClient({ token: `tok-${opts.uid}`, ...opts, wsAddr: opts.wsAddr ?? gw.url });
  clients.push(c);
  return c;
};

beforeAll(async () => {
  gw = await startFakeGateway();
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});
afterAll(async () => {
  await gw?.close();
});

describe('wukongimjssdk harness', () => {
  it('loads the SDK in a child process, which opens a WebSocket and sends a CONNECT our decoder reads', async () => {
    const silent = await startFakeGateway({ answerConnect: false });
    try {
      const sdk = await spawn({ uid: 'alice', protoVersion: 5, wsAddr: silent.url });
      const connecting = sdk.waitForStatus(SdkConnectStatus.Connected, 1000).catch(() => 'not connected');
      sdk.connect(1000).catch(() => undefined);
      const s = await silent.nextConnect();
      expect(s.connect).toMatchObject({ type: PacketType.CONNECT, version: 5, deviceFlag: 1, uid: 'alice', token: 'tok-alice' });
      expect(Buffer.from(s.connect?.clientKey ?? '', 'base64')).toHaveLength(32);
      expect(s.connect?.deviceId).toMatch(/^[0-9a-f]{32}W$/);
      expect(Number(s.connect?.clientTimestamp)).toBeGreaterThan(Date.now() - 60_000);
      expect(s.errors).toStrictEqual([]);
      expect(await connecting).toBe('not connected');
    } finally {
      await silent.close();
    }
  });

  it('connects at the SDK default version with our key exchange; SEND decrypts with a valid msg_key; RECV reaches the SDK', async () => {
    const sdk = await spawn({ uid: 'bob' });
    const status = await sdk.connect();
    expect(status).toStrictEqual({ status: SdkConnectStatus.Connected, reasonCode: 1 });
    const s = await gw.nextConnect();
    expect(s.connect?.version).toBe(2);

    const ack = await sdk.sendText('carol', 1, 'hello wörld');
    const sent = s.sends[0];
    expect(sent?.packet).toMatchObject({ redDot: true, channelId: 'carol', channelType: 1, clientSeq: ack.clientSeq });
    expect(JSON.parse(sent?.plaintext ?? '')).toStrictEqual({ content: 'hello wörld', type: 1 });
    expect(ack).toMatchObject({ reasonCode: 1, messageID: '1957234823423213568', messageSeq: 1, clientMsgNo: sent?.packet.clientMsgNo });

    const recv = gw.pushRecv(s, {
      redDot: true,
      fromUid: 'carol',
      channelId: 'carol',
      channelType: 1,
      clientMsgNo: 'cmn-1',
      messageId: 9_007_199_254_740_993n,
      messageSeq: 4_294_967_295n,
      timestamp: 1_785_398_400,
      payload: JSON.stringify({ type: 1, content: 'hi bob' }),
    });
    const m = await sdk.nextMessage();
    expect(m).toMatchObject({
      fromUID: 'carol',
      channelId: 'carol',
      channelType: 1,
      messageID: '9007199254740993',
      messageSeq: 4_294_967_295,
      clientMsgNo: 'cmn-1',
      timestamp: 1_785_398_400,
      contentType: 1,
      text: 'hi bob',
      header: { redDot: true },
    });
    const ra = await gw.until(() => s.recvacks[0]);
    expect(ra).toMatchObject({ messageId: recv.messageId, messageSeq: recv.messageSeq, redDot: true });
    expect(s.errors).toStrictEqual([]);

    await sdk.close();
    const alive = (): boolean => {
      try {
        process.kill(sdk.pid ?? 0, 0);
        return true;
      } catch {
        return false;
      }
    };
    expect(alive()).toBe(false);
    await gw.until(() => (s.ws.readyState === s.ws.CLOSED ? true : undefined));
  });

  // Behaviour of the published 1.0.4 that the server must live with (see the report / spec notes).
  it('quirk: at protoVersion 5 the SDK cannot parse a spec CONNACK (no server_version support) and reports ConnectFail', async () => {
    const sdk = await spawn({ uid: 'dave', protoVersion: 5 });
    const err = (await sdk.connect().catch((e: unknown) => e)) as { status?: number; reasonCode?: number };
    const s = await gw.nextConnect();
    expect(s.connect?.version).toBe(5);
    expect(err).toMatchObject({ status: SdkConnectStatus.ConnectFail, reasonCode: 0 });
  });

  it('quirk: two packets coalesced in one WebSocket message lose the second one', async () => {
    const sdk = await spawn({ uid: 'erin' });
    await sdk.connect();
    const s = await gw.nextConnect();
    const base = { fromUid: 'a', channelId: 'a', channelType: 1, clientMsgNo: 'c', messageSeq: 1n, timestamp: 1 };
    const first = s.crypto?.sealRecv({
      ...base,
      type: PacketType.RECV,
      setting: 0,
      msgKey: '',
      messageId: 1n,
      payload: Buffer.from('{"type":1,"content":"first"}'),
    });
    gw.pushRecv(s, { ...base, messageId: 2n, payload: '{"type":1,"content":"second"}' }, first ? [first] : []);
    expect((await sdk.nextMessage()).text).toBe('first');
    await expect(sdk.nextMessage(800)).rejects.toThrow('timed out');
    gw.pushRecv(s, { ...base, messageId: 3n, payload: '{"type":1,"content":"third"}' });
    expect((await sdk.nextMessage()).text).toBe('third');
  });
});
