/**
 * WkprotoClient's in-place receive path (`onPayload`): same payloads, same
 * checks and same RECVACKs as the reference path, the RECVACKs of one read
 * in one write.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  encodePacket,
  PacketType,
  setRecvBatchEnabled,
  Setting,
  WkprotoClient,
  WkprotoCryptoError,
  WkprotoDecoder,
} from '../src/wkproto/index.ts';
import { startMiniServer, type MiniServer } from './wkproto-mini-server.ts';
import { collector, recv, scriptedServer } from './wkproto-scripted.ts';
import { DirectWriter } from '../src/net/direct-write.ts';

let server: MiniServer;
beforeAll(async () => {
  server = await startMiniServer(0xffff_fff0n);
});
afterAll(async () => {
  await server?.close();
});

describe('WkprotoClient onPayload against a library-built server', () => {
  for (const c of [
    { transport: 'tcp', version: 5 },
    { transport: 'tcp', version: 6 },
    { transport: 'ws', version: 5 },
    { transport: 'ws', version: 2 },
  ] as const) {
    it(`${c.transport} V${c.version}: 12 pipelined messages come back decrypted, in order, each acknowledged`, async () => {
      const sink = collector(12);
      const client = new WkprotoClient({
        url: c.transport === 'tcp' ? server.tcpUrl : server.wsUrl,
        uid: `fast-${c.transport}-${c.version}`,
        token: 'good',
        version: c.version,
        onPayload: sink.onPayload,
      });
      const recvEvents: unknown[] = [];
      client.on('recv', (m) => recvEvents.push(m));
      try {
        await client.connect();
        const texts = Array.from({ length: 12 }, (_, i) => `s2:p0:0|${i}|${i}.5|héllo ${'x'.repeat(i)}`);
        const acks = await Promise.all(texts.map((payload) => client.send({ channelId: 'g', channelType: 2, payload })));
        await sink.done;
        expect(sink.got).toStrictEqual(texts);
        expect(recvEvents).toHaveLength(0);
        await client.ping(); // after the RECVACKs on the wire: the server has read them all
        const acked = new Map(server.log.recvacks.map((r) => [r.messageId, r.messageSeq]));
        for (const a of acks) expect(acked.get(a.messageId)).toBe(a.messageSeq);
      } finally {
        client.close();
      }
    });
  }
});

describe('WkprotoClient onPayload: the shared TCP read buffer', () => {
  it('keeps concurrent clients apart, and a reference client’s held messages intact', async () => {
    const a = collector(12);
    const b = collector(12);
    const fast = [a, b].map(
      (sink, i) => new WkprotoClient({ url: server.tcpUrl, uid: `share-${i}`, token: 'good', onPayload: sink.onPayload }),
    );
    const plain = new WkprotoClient({ url: server.tcpUrl, uid: 'share-plain', token: 'good' });
    try {
      await Promise.all([...fast, plain].map((c) => c.connect()));
      const texts = (tag: string): string[] => Array.from({ length: 12 }, (_, i) => `${tag}|${i}|${'y'.repeat(40 + i)}`);
      await Promise.all([
        ...fast.map((c, i) => Promise.all(texts(`c${i}`).map((payload) => c.send({ channelId: 'g', channelType: 2, payload })))),
        Promise.all(texts('plain').map((payload) => plain.send({ channelId: 'g', channelType: 2, payload }))),
      ]);
      await Promise.all([a.done, b.done]);
      const held = await Promise.all(texts('plain').map(() => plain.nextMessage()));
      expect(a.got).toStrictEqual(texts('c0'));
      expect(b.got).toStrictEqual(texts('c1'));
      expect(held.map((m) => m.payload.toString())).toStrictEqual(texts('plain'));
    } finally {
      for (const c of [...fast, plain]) c.close();
    }
  });
});

describe('WkprotoClient onPayload: failures, other shapes, RECVACK batching', () => {
  it('drops a RECV with a bad msg_key (recv-error, no RECVACK), delivers plain, topic and non-ASCII RECVs, acks in stream order', async () => {
    const big = 2n ** 63n - 5n;
    const srv = await scriptedServer((seal, v, s) => {
      const tampered = seal(recv(2n, 'B'));
      tampered.msgKey = `${tampered.msgKey.slice(0, 31)}${tampered.msgKey.endsWith('0') ? '1' : '0'}`;
      s.write(
        Buffer.concat([
          encodePacket(seal(recv(big, 'A')), v),
          encodePacket(tampered, v),
          encodePacket(recv(3n, 'C', { setting: Setting.NO_ENCRYPT }), v),
          encodePacket(seal(recv(4n, 'D', { setting: Setting.TOPIC, topic: 'news' })), v),
          encodePacket(seal(recv(5n, 'E', { fromUid: 'jörg' })), v),
          encodePacket(seal(recv(-6n, 'F')), v),
        ]),
      );
    });
    const sink = collector(5);
    const errors: Error[] = [];
    const client = new WkprotoClient({ url: srv.url, uid: 'u', token: 't', version: 5, onPayload: sink.onPayload });
    client.on('recv-error', (e: Error) => errors.push(e));
    try {
      await client.connect();
      client.send({ channelId: 'g', channelType: 2, payload: 'go' }).catch(() => undefined);
      await sink.done;
      expect(sink.got).toStrictEqual(['A', 'C', 'D', 'E', 'F']);
      expect(errors.map((e) => (e as WkprotoCryptoError).code)).toStrictEqual(['MSG_KEY_MISMATCH']);
      await client.ping();
      expect(srv.recvacks.map((r) => [r.messageId, r.messageSeq])).toStrictEqual(
        [big, 3n, 4n, 5n, -6n].map((id) => [id, 100n + (id & 0xffffn)]),
      );
    } finally {
      client.close();
      await srv.close();
    }
  });

  it('writes the RECVACKs of one read in one write', async () => {
    // The in-place path's own writes (in batches, the native call writes them: recv-batch.test.ts).
    setRecvBatchEnabled(false);
    const srv = await scriptedServer(
      (seal, v, s) =>
        void s.write(Buffer.concat(Array.from({ length: 20 }, (_, i) => encodePacket(seal(recv(BigInt(i + 1), `m${i}`)), v)))),
    );
    const sink = collector(20);
    const client = new WkprotoClient({ url: srv.url, uid: 'u', token: 't', version: 6, onPayload: sink.onPayload });
    let reads = 0;
    const push = WkprotoDecoder.prototype.push;
    // Over TCP with onPayload the client writes through a DirectWriter (straight to the socket's handle).
    const write = vi.spyOn(DirectWriter.prototype, 'write');
    try {
      await client.connect();
      client.send({ channelId: 'g', channelType: 2, payload: 'go' }).catch(() => undefined);
      // The client's writes of RECVACK frames (the in-process server's writes start with other types).
      const ackWrites = (): number => write.mock.calls.filter(([b]) => Buffer.isBuffer(b) && b[0]! >> 4 === PacketType.RECVACK).length;
      vi.spyOn(WkprotoDecoder.prototype, 'push').mockImplementation(function (this: WkprotoDecoder, chunk, onPacket, length, start) {
        reads++;
        return push.call(this, chunk, onPacket, length, start);
      });
      await sink.done;
      const writes = ackWrites();
      vi.restoreAllMocks();
      // At most one write per read (a read may complete no RECV): the 20 frames of one server write arrive in a read or a few.
      expect(writes).toBeGreaterThan(0);
      expect(writes).toBeLessThanOrEqual(reads);
      expect(writes).toBeLessThan(20);
      await client.ping();
      expect(srv.recvacks.map((r) => r.messageId)).toStrictEqual(Array.from({ length: 20 }, (_, i) => BigInt(i + 1)));
      expect(srv.recvacks.map((r) => r.messageSeq)).toStrictEqual(Array.from({ length: 20 }, (_, i) => BigInt(i + 101)));
    } finally {
      vi.restoreAllMocks();
      setRecvBatchEnabled(true);
      client.close();
      await srv.close();
    }
  });
});
