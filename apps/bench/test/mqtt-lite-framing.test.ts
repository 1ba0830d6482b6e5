/**
 * MqttLite's reading of the broker's byte stream, chunk by chunk: PUBLISH
 * frames split anywhere across reads (inside the remaining length, the topic,
 * the packet id or the payload), several frames in one read, and the PUBACKs
 * of one read written together, in order. The peer is a plain TCP server that
 * accepts the CONNECT and records what the client writes; the reads are fed
 * to the client directly so that every split point is exercised (TCP would
 * choose its own).
 */
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deadline, pendingDeadlines } from '../src/deadlines.ts';
import { MqttLite } from '../src/drivers/mqtt-lite.ts';

/** A PUBLISH frame: QoS 0 (no packet id) or 1. */
function publish(topic: string, payload: Buffer, qos: 0 | 1, id = 0): Buffer {
  const t = Buffer.from(topic);
  const body = Buffer.concat([
    Buffer.from([t.length >> 8, t.length & 0xff]),
    t,
    qos ? Buffer.from([id >> 8, id & 0xff]) : Buffer.alloc(0),
    payload,
  ]);
  const len: number[] = [];
  let n = body.length;
  do {
    len.push((n % 128) | (n >= 128 ? 0x80 : 0));
    n = Math.floor(n / 128);
  } while (n > 0);
  return Buffer.concat([Buffer.from([0x30 | (qos << 1), ...len]), body]);
}

interface Received {
  topic: string;
  payload: string;
}

describe('MqttLite framing', () => {
  let server: Server;
  let port = 0;
  /** Bytes each accepted connection wrote after its CONNECT. */
  const written: Buffer[][] = [];

  beforeAll(async () => {
    server = createServer((s: Socket) => {
      const mine: Buffer[] = [];
      written.push(mine);
      let connected = false;
      s.on('data', (d: Buffer) => {
        if (connected) mine.push(d);
        else {
          connected = true; // the CONNECT (one small write): accept it
          s.write(Buffer.from([0x20, 2, 0, 0]));
        }
      });
      s.on('error', () => undefined);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as { port: number }).port;
  });

  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  /** A client connected to the peer, its received messages, its writes counted, and its onData. */
  async function client() {
    const got: Received[] = [];
    const c = await MqttLite.connect({
      host: '127.0.0.1',
      port,
      clientId: 'x',
      username: 'u',
      password: 'p',
      timeoutMs: 5000,
      onMessage: (buf, start, end, topicStart, topicEnd) =>
        got.push({ topic: buf.toString('utf8', topicStart, topicEnd), payload: buf.toString('utf8', start, end) }),
    });
    const inner = c as unknown as { writer: { write(b: Uint8Array): boolean }; onData(chunk: Buffer): void };
    let writes = 0;
    const write = inner.writer.write.bind(inner.writer);
    inner.writer.write = (b: Uint8Array) => {
      writes++;
      return write(b);
    };
    return { c, got, feed: (chunk: Buffer) => inner.onData(chunk), writes: () => writes, peer: written.at(-1)! };
  }

  /** Resolves once the peer has received `n` bytes from the client. */
  async function peerBytes(peer: Buffer[], n: number): Promise<Buffer> {
    while (Buffer.concat(peer).length < n) await new Promise((r) => setImmediate(r));
    return Buffer.concat(peer);
  }

  const frames = [
    publish('u/a', Buffer.from('first'), 1, 1),
    publish('g/é', Buffer.from('qos zero, no packet id'), 0),
    publish('u/a', Buffer.from('x'.repeat(300)), 1, 0x1234), // remaining length of two bytes
    publish('u/b', Buffer.alloc(0), 1, 0xffff), // empty payload
  ];
  const want: Received[] = [
    { topic: 'u/a', payload: 'first' },
    { topic: 'g/é', payload: 'qos zero, no packet id' },
    { topic: 'u/a', payload: 'x'.repeat(300) },
    { topic: 'u/b', payload: '' },
  ];
  const pubacks = Buffer.from([0x40, 2, 0, 1, 0x40, 2, 0x12, 0x34, 0x40, 2, 0xff, 0xff]);

  it('reads several frames from one chunk and acknowledges their QoS 1 ones in one write, in order', async () => {
    const { c, got, feed, writes, peer } = await client();
    const before = writes();
    feed(Buffer.concat(frames));
    expect(got).toEqual(want);
    expect(writes() - before).toBe(1);
    expect(await peerBytes(peer, pubacks.length)).toEqual(pubacks);
    await c.close();
  });

  it('reads the same frames split at every byte into two chunks, and three chunks, with nothing lost or repeated', async () => {
    const { c, got, feed, peer } = await client();
    const all = Buffer.concat(frames);
    let rounds = 0;
    for (let i = 1; i < all.length; i++) {
      feed(Buffer.from(all.subarray(0, i)));
      feed(Buffer.from(all.subarray(i)));
      rounds++;
    }
    for (let i = 1; i + 7 < all.length; i += 7) {
      feed(Buffer.from(all.subarray(0, i)));
      feed(Buffer.from(all.subarray(i, i + 7)));
      feed(Buffer.from(all.subarray(i + 7)));
      rounds++;
    }
    expect(got).toEqual(Array.from({ length: rounds }, () => want).flat());
    const acks = await peerBytes(peer, pubacks.length * rounds);
    expect(acks).toEqual(Buffer.concat(Array.from({ length: rounds }, () => pubacks)));
    await c.close();
  });

  it('closes on a PUBLISH whose topic runs past its frame', async () => {
    const { c, got, feed } = await client();
    // Remaining length 4: topic length 10 but only 2 bytes of it.
    feed(Buffer.from([0x32, 4, 0, 10, 0x75, 0x2f]));
    expect(got).toEqual([]);
    await expect(c.publish('u/a', 'x')).rejects.toThrow(/shorter than its topic/);
    await c.close();
  });
});

describe('deadlines', () => {
  it('calls an expired limit once and never a cancelled one', async () => {
    const before = pendingDeadlines();
    let cancelledFired = 0;
    const cancel = deadline(1, () => cancelledFired++);
    cancel();
    let fired = 0;
    await new Promise<void>((resolve) =>
      deadline(20, () => {
        fired++;
        resolve();
      }),
    );
    expect(fired).toBe(1);
    expect(cancelledFired).toBe(0);
    expect(pendingDeadlines()).toBe(before);
  });
});
