import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PacketType, WkprotoClient } from '@parley/protocol/wkproto';
import { connectRpc, startTestServer, storeToken, type TestServer } from './helpers.ts';

// The server reads a WKProto RECVACK in place (no packet object or BigInt); these pin what it does with one.

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  for (const uid of ['k-alice', 'k-v5', 'k-v6', 'k-cut']) await storeToken(t.api, uid, `tok-${uid}`);
});
afterAll(() => t.close());

/** Unacknowledged RECVs of `uid`'s one session on this node. */
function pendingOf(uid: string): number {
  const sessions = [...(t.server.presence.sessionsOf(uid) ?? [])];
  expect(sessions).toHaveLength(1);
  return (sessions[0] as unknown as { pendingAckCount: number }).pendingAckCount;
}

async function until(check: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('WKProto RECVACK', { timeout: 15_000 }, () => {
  for (const version of [5, 6]) {
    it(`v${version}: an ack with id 0 or a negative id acks nothing; the delivered id acks its RECV`, async () => {
      const alice = await connectRpc(t.ws, 'k-alice', 'tok-k-alice');
      const uid = `k-v${version}`;
      const c = new WkprotoClient({ url: t.tcp, uid, token: `tok-${uid}`, deviceFlag: 1, version, autoRecvAck: false });
      await c.connect();
      const r = await alice.request('send', { channelId: uid, channelType: 1, payload: { n: 1 }, clientMsgNo: `${uid}-1` });
      expect((r.result as { reasonCode: number }).reasonCode).toBe(1);
      const m = await c.nextMessage();
      expect(pendingOf(uid)).toBe(1);
      c.recvAck(0n, m.packet.messageSeq);
      c.recvAck(-m.packet.messageId, m.packet.messageSeq);
      c.recvAck(m.packet.messageId + 1n, m.packet.messageSeq);
      // Packets are handled in order: once PONG is back the three acks were read.
      await c.ping();
      expect(pendingOf(uid)).toBe(1);
      c.recvAck(m.packet.messageId, m.packet.messageSeq);
      await c.ping();
      expect(pendingOf(uid)).toBe(0);
      c.close();
      alice.close();
    });
  }

  it('closes the session on a RECVACK too short for its version', async () => {
    const c = new WkprotoClient({ url: t.tcp, uid: 'k-cut', token: 'tok-k-cut', deviceFlag: 1, version: 6, autoRecvAck: false });
    await c.connect();
    const closed = new Promise<void>((resolve) => c.on('close', () => resolve()));
    const transport = (c as unknown as { transport: { write(b: Uint8Array): void } }).transport;
    // A v6 RECVACK needs 16 body bytes; this one has 12 (a v5 ack).
    transport.write(Buffer.from([PacketType.RECVACK << 4, 12, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1]));
    await closed;
    await until(() => !t.server.presence.sessionsOf('k-cut')?.size);
  });
});
