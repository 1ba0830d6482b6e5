/**
 * WkprotoClient's batch receive path (src/wkproto/recv-batch.ts): TCP
 * clients with `onPayload`, reads from the read pump and the native crypto
 * have their RECVs opened many sockets at a time. Same payloads, same
 * RECVACKs as the in-place path; reads it cannot take (a frame split across
 * reads, another packet) go to the client's own decoder, and the path
 * resumes once that decoder holds nothing.
 */
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { readPumpImplementation } from '../src/net/index.ts';
import { collector, recv, scriptedServer } from './wkproto-scripted.ts';
import {
  encodePacket,
  PacketType,
  recvBatchStats,
  setRecvBatchEnabled,
  WkprotoClient,
  wkcryptoImplementation,
  type WkPacket,
} from '../src/wkproto/index.ts';

const batched = readPumpImplementation.reason === 'built' && wkcryptoImplementation.name === 'native';

afterEach(() => setRecvBatchEnabled(true));

describe.runIf(batched)('WkprotoClient: RECVs opened in batches', () => {
  for (const on of [true, false]) {
    it(`${on ? 'batch path' : 'in-place path (batches off)'}: 20 clients × 15 RECVs, each payload in order, each RECV acknowledged`, async () => {
      setRecvBatchEnabled(on);
      // Each connection's first SEND names it (its payload is the client's number); its 15 RECVs follow, a write each.
      const srv = await scriptedServer(async (seal, v, s, first) => {
        const i = Number(first);
        for (let k = 0; k < 15; k++) {
          s.write(encodePacket(seal(recv(BigInt(i * 100 + k + 1), `c${i}|${k}|${'z'.repeat(k * 5)}`)), v));
          await pause(1);
        }
      });
      const sinks = Array.from({ length: 20 }, () => collector(15));
      const clients = sinks.map(
        (sink, i) =>
          new WkprotoClient({ url: srv.url, uid: `batch-${i}`, token: 't', version: i % 2 === 0 ? 5 : 6, onPayload: sink.onPayload }),
      );
      const before = { ...recvBatchStats };
      try {
        await Promise.all(clients.map((c) => c.connect()));
        for (const [i, c] of clients.entries()) c.send({ channelId: 'g', channelType: 2, payload: String(i) }).catch(() => undefined);
        await Promise.all(sinks.map((s) => s.done));
        sinks.forEach((s, i) => expect(s.got).toStrictEqual(Array.from({ length: 15 }, (_, k) => `c${i}|${k}|${'z'.repeat(k * 5)}`)));
        await Promise.all(clients.map((c) => c.ping()));
        const acked = srv.recvacks.map((r) => r.messageId).sort((a, b) => (a < b ? -1 : 1));
        expect(acked).toStrictEqual(clients.flatMap((_, i) => Array.from({ length: 15 }, (_, k) => BigInt(i * 100 + k + 1))));
        const frames = recvBatchStats.frames - before.frames;
        if (on) expect(frames).toBeGreaterThan(0);
        else expect(frames).toBe(0);
      } finally {
        for (const c of clients) c.close();
        await srv.close();
      }
    });
  }

  it('reads a frame split across reads on the client’s own decoder, then opens in batches again', async () => {
    const srv = await scriptedServer(async (seal, v, s) => {
      const frames = [1n, 2n, 3n, 4n].map((id) => encodePacket(seal(recv(id, `m${id}`)), v));
      s.write(frames[0]!);
      await pause(30);
      s.write(frames[1]!.subarray(0, 20));
      await pause(30);
      s.write(Buffer.concat([frames[1]!.subarray(20), frames[2]!]));
      await pause(30);
      s.write(frames[3]!);
    });
    const sink = collector(4);
    const client = new WkprotoClient({ url: srv.url, uid: 'u', token: 't', version: 5, onPayload: sink.onPayload });
    const before = { ...recvBatchStats };
    try {
      await client.connect();
      client.send({ channelId: 'g', channelType: 2, payload: 'go' }).catch(() => undefined);
      await sink.done;
      expect(sink.got).toStrictEqual(['m1', 'm2', 'm3', 'm4']);
      await client.ping();
      expect(srv.recvacks.map((r) => r.messageId)).toStrictEqual([1n, 2n, 3n, 4n]);
      // The first and the last read opened in batches; the split frame's first part was declined (its rest read while the decoder held the part).
      expect(recvBatchStats.opened - before.opened).toBeGreaterThanOrEqual(2);
      expect(recvBatchStats.declined - before.declined).toBeGreaterThanOrEqual(2);
    } finally {
      client.close();
      await srv.close();
    }
  });

  it('never opens the rest of a frame its decoder holds the start of, even when that rest reads as a whole RECV', async () => {
    // An EVENT whose data is a whole sealed RECV frame, its header and first bytes in one write and the embedded frame in the next.
    const srv = await scriptedServer(async (seal, v, s) => {
      const embedded = encodePacket(seal(recv(9n, 'embedded')), v);
      const event = encodePacket({ type: PacketType.EVENT, id: 'e1', eventType: 'x', timestamp: 0n, data: embedded }, v);
      s.write(encodePacket(seal(recv(1n, 'm1')), v));
      await pause(30);
      s.write(event.subarray(0, event.length - embedded.length));
      await pause(30);
      s.write(event.subarray(event.length - embedded.length));
      await pause(30);
      s.write(encodePacket(seal(recv(2n, 'm2')), v));
    });
    const sink = collector(2);
    const client = new WkprotoClient({ url: srv.url, uid: 'u', token: 't', version: 5, onPayload: sink.onPayload });
    const events: WkPacket[] = [];
    client.on('packet', (p: WkPacket) => events.push(p));
    try {
      await client.connect();
      client.send({ channelId: 'g', channelType: 2, payload: 'go' }).catch(() => undefined);
      await sink.done;
      await client.ping();
      expect(sink.got).toStrictEqual(['m1', 'm2']);
      expect(events.map((e) => e.type)).toStrictEqual([PacketType.EVENT]);
      expect(srv.recvacks.map((r) => r.messageId)).toStrictEqual([1n, 2n]);
    } finally {
      client.close();
      await srv.close();
    }
  });

  it('hands nothing more to a client its own payload handler closed, mid-read', async () => {
    const srv = await scriptedServer(async (seal, v, s) => {
      s.write(Buffer.concat([1n, 2n, 3n].map((id) => encodePacket(seal(recv(id, `m${id}`)), v))));
    });
    const got: string[] = [];
    const client: WkprotoClient = new WkprotoClient({
      url: srv.url,
      uid: 'u',
      token: 't',
      version: 5,
      onPayload: (buf, start, end) => {
        got.push(buf.toString('utf8', start, end));
        client.close();
      },
    });
    const closed = once(client, 'close');
    const before = { ...recvBatchStats };
    try {
      await client.connect();
      client.send({ channelId: 'g', channelType: 2, payload: 'go' }).catch(() => undefined);
      await closed;
      await pause(50);
      expect(got).toStrictEqual(['m1']);
      expect(recvBatchStats.frames - before.frames).toBe(3);
    } finally {
      await srv.close();
    }
  });
});

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
