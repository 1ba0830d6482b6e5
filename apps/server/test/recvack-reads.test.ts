import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeRecvack, Setting, WkprotoClient } from '@parley/protocol/wkproto';
import { connectRpc, startTestServer, storeToken, type TestServer } from './helpers.ts';

// RECVACKs are matched with the oldest RECV awaiting one where they lie, and socket reads land in
// one shared buffer; these pin what that must not change: which acks ack what, and what a read
// hands on (a SEND's payload) outliving the read.

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  for (const uid of ['o-alice', 'o-bob', 'o-wk', 's-alice', 's-bob', 's-carol', 'e-alice', 'e-bob', 'e-carol'])
    await storeToken(t.api, uid, `tok-${uid}`);
});
afterAll(() => t.close());

/** Unacknowledged RECVs of `uid`'s one session on this node. */
function pendingOf(uid: string): number {
  const sessions = [...(t.server.presence.sessionsOf(uid) ?? [])];
  expect(sessions).toHaveLength(1);
  return (sessions[0] as unknown as { pendingAckCount: number }).pendingAckCount;
}

describe('RECVACK matching', { timeout: 20_000 }, () => {
  it('JSON-RPC: acks in any order ack their own RECV; an id spelled otherwise or unknown acks none', async () => {
    const alice = await connectRpc(t.ws, 'o-alice', 'tok-o-alice');
    const bob = await connectRpc(t.ws, 'o-bob', 'tok-o-bob');
    const recvs = [];
    for (let n = 0; n < 3; n++) {
      const r = await alice.request('send', { channelId: 'o-bob', channelType: 1, payload: { n }, clientMsgNo: `o-bob-${n}` });
      expect((r.result as { reasonCode: number }).reasonCode).toBe(1);
      recvs.push((await bob.nextNotification('recv')).params as { messageId: string; messageSeq: number });
    }
    const ack = (messageId: string, messageSeq = 1) => bob.notify('recvack', { messageId, messageSeq });
    // A ping's answer comes after every frame sent before it was read.
    const settle = async () => expect((await bob.request('ping', {})).result).toBeNull();
    await settle();
    expect(pendingOf('o-bob')).toBe(3);
    ack(recvs[2]!.messageId, recvs[2]!.messageSeq);
    ack(`0${recvs[0]!.messageId}`);
    ack(`${recvs[0]!.messageId}0`);
    ack(String(BigInt(recvs[0]!.messageId) + 1000n));
    await settle();
    expect(pendingOf('o-bob')).toBe(2);
    ack(recvs[0]!.messageId, recvs[0]!.messageSeq);
    ack(recvs[0]!.messageId, recvs[0]!.messageSeq);
    await settle();
    expect(pendingOf('o-bob')).toBe(1);
    ack(recvs[1]!.messageId, recvs[1]!.messageSeq);
    await settle();
    expect(pendingOf('o-bob')).toBe(0);
    alice.close();
    bob.close();
  });

  it('WKProto: acks in any order ack their own RECV; an unknown id acks none', async () => {
    const alice = await connectRpc(t.ws, 'o-alice', 'tok-o-alice');
    const c = new WkprotoClient({ url: t.tcp, uid: 'o-wk', token: 'tok-o-wk', deviceFlag: 1, version: 6, autoRecvAck: false });
    await c.connect();
    const ids: Array<[bigint, bigint]> = [];
    for (let n = 0; n < 3; n++) {
      const r = await alice.request('send', { channelId: 'o-wk', channelType: 1, payload: { n }, clientMsgNo: `o-wk-${n}` });
      expect((r.result as { reasonCode: number }).reasonCode).toBe(1);
      const m = await c.nextMessage();
      ids.push([m.packet.messageId, m.packet.messageSeq]);
    }
    await c.ping();
    expect(pendingOf('o-wk')).toBe(3);
    c.recvAck(ids[1]![0], ids[1]![1]);
    c.recvAck(ids[0]![0] + 1000n, 1n);
    await c.ping();
    expect(pendingOf('o-wk')).toBe(2);
    c.recvAck(ids[2]![0], ids[2]![1]);
    c.recvAck(ids[0]![0], ids[0]![1]);
    await c.ping();
    expect(pendingOf('o-wk')).toBe(0);
    c.close();
    alice.close();
  });
});

describe('reads into one shared buffer', { timeout: 20_000 }, () => {
  // Reads are decoded where they lie: a SEND's payload must reach the store and the recipient as
  // a buffer of its own (decrypted, or copied when unencrypted), not a view of the read.
  for (const [which, prefix, setting] of [
    ['an unencrypted', 's', Setting.NO_ENCRYPT],
    ['an encrypted', 'e', 0],
  ] as const) {
    it(`keeps ${which} SEND's payload intact while other connections' reads land in the buffer it was read into`, async () => {
      const open = (uid: string) =>
        new WkprotoClient({ url: t.tcp, uid, token: `tok-${uid}`, deviceFlag: 1, version: 6, autoRecvAck: false });
      const alice = open(`${prefix}-alice`);
      const bob = open(`${prefix}-bob`);
      const carol = open(`${prefix}-carol`);
      await Promise.all([alice.connect(), bob.connect(), carol.connect()]);
      const transport = (carol as unknown as { transport: { write(b: Uint8Array): void } }).transport;
      const acks = Buffer.concat(Array.from({ length: 8 }, (_, i) => encodeRecvack(BigInt(i + 1), 1n, 6)));
      const sent: string[] = [];
      const acked: Promise<unknown>[] = [];
      for (let n = 0; n < 30; n++) {
        const payload = `payload ${n} ${'x'.repeat(n * 7)}`;
        sent.push(payload);
        acked.push(alice.send({ channelId: `${prefix}-bob`, channelType: 1, payload, setting, clientMsgNo: `${prefix}-${n}` }));
        // Carol's acks (of nothing) are read while Alice's SEND waits for its commit.
        for (let k = 0; k < 4; k++) transport.write(acks);
      }
      await Promise.all(acked);
      const got: string[] = [];
      for (let n = 0; n < sent.length; n++) got.push((await bob.nextMessage()).payload.toString('utf8'));
      expect(got).toEqual(sent);
      for (const c of [alice, bob, carol]) c.close();
    });
  }
});
