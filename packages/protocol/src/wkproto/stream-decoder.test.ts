import { describe, expect, it } from 'vitest';
import { corpusFrames, prng } from '../../test/wkproto-corpus.ts';
import { MAX_HEADER_BYTES, PacketType } from './constants.ts';
import { decodePacket } from './decode.ts';
import { encodePacket } from './encode.ts';
import { WkprotoDecodeError } from './errors.ts';
import { WkprotoDecoder } from './stream-decoder.ts';
import type { WkPacket } from './types.ts';

const canon = (packets: WkPacket[]): unknown[] =>
  packets.map((p) =>
    Object.fromEntries(Object.entries(p).map(([k, v]) => [k, v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v])),
  );

function decodeChunks(chunks: Buffer[], version = 5): WkPacket[] {
  const d = new WkprotoDecoder({ version });
  const out: WkPacket[] = [];
  for (const c of chunks) d.push(c, (p) => out.push(p));
  expect(d.bufferedBytes).toBe(0);
  return out;
}

describe('WkprotoDecoder chunking', () => {
  for (const version of [2, 5, 6]) {
    const frames = corpusFrames(version);
    const stream = Buffer.concat(frames);
    const expected = canon(frames.map((f) => decodePacket(f, version)));

    it(`V${version}: the whole stream in one chunk (many packets per read)`, () => {
      expect(canon(decodeChunks([stream], version))).toStrictEqual(expected);
    });

    it(`V${version}: one byte per chunk`, () => {
      const chunks = Array.from({ length: stream.length }, (_, i) => stream.subarray(i, i + 1));
      expect(canon(decodeChunks(chunks, version))).toStrictEqual(expected);
    });

    it(`V${version}: split into two chunks at every byte boundary`, () => {
      for (let cut = 0; cut <= stream.length; cut += cut < 400 ? 1 : 97) {
        const got = decodeChunks([stream.subarray(0, cut), stream.subarray(cut)], version);
        expect(got.length).toBe(frames.length);
      }
      const small = Buffer.concat(corpusFrames(version, false));
      const smallExpected = canon(decodeChunks([small], version));
      for (let cut = 0; cut <= small.length; cut++) {
        expect(canon(decodeChunks([small.subarray(0, cut), small.subarray(cut)], version))).toStrictEqual(smallExpected);
      }
    });

    it(`V${version}: each read in a shared buffer passed whole with where it lies (bytes around it ignored)`, () => {
      const rnd = prng(version + 100);
      // What a shared read buffer gives: a read at offset 0 (Node's reads) or anywhere in it (the read
      // pump's batch), stale bytes around it.
      const shared = Buffer.alloc(8192, 0xff);
      for (let round = 0; round < 20; round++) {
        const d = new WkprotoDecoder({ version });
        const out: WkPacket[] = [];
        for (let pos = 0; pos < stream.length;) {
          const n = Math.min(1 + Math.floor(rnd() * (rnd() < 0.5 ? 8 : 5000)), shared.length / 2, stream.length - pos);
          const at = round % 2 === 0 ? 0 : Math.floor(rnd() * (shared.length - n));
          stream.copy(shared, at, pos, pos + n);
          d.push(shared, (p) => out.push(canon([p])[0] as WkPacket), n, at);
          shared.fill(rnd() < 0.5 ? 0xff : 0x30, at, at + n);
          pos += n;
        }
        expect(d.bufferedBytes).toBe(0);
        expect(out).toStrictEqual(expected);
      }
    });

    it(`V${version}: random chunk sizes, fixed seed`, () => {
      const rnd = prng(version);
      for (let round = 0; round < 50; round++) {
        const chunks: Buffer[] = [];
        for (let pos = 0; pos < stream.length;) {
          const n = 1 + Math.floor(rnd() * (rnd() < 0.5 ? 8 : 5000));
          chunks.push(stream.subarray(pos, pos + n));
          pos += n;
        }
        expect(canon(decodeChunks(chunks, version))).toStrictEqual(expected);
      }
    });
  }
});

describe('WkprotoDecoder hot path and bounds', () => {
  it('decodes a whole packet in place: its payload is a view of the chunk', () => {
    const frame = corpusFrames(5)[3] as Buffer;
    const [p] = new WkprotoDecoder().decodeAll(frame);
    expect(p?.type).toBe(PacketType.SEND);
    if (p?.type === PacketType.SEND) expect(p.payload.buffer).toBe(frame.buffer);
  });

  it('accepts a plain Uint8Array chunk', () => {
    const frame = encodePacket({ type: PacketType.DISCONNECT, reasonCode: 1, reason: 'r' }, 5);
    expect(new WkprotoDecoder().decodeAll(new Uint8Array(frame))).toMatchObject([{ reason: 'r' }]);
  });

  it('rejects a declared length over the limit as soon as the header is complete, then stays failed', () => {
    const d = new WkprotoDecoder({ maxRemainingLength: 100 });
    expect(d.decodeAll(Buffer.from([0x90, 0x64]))).toStrictEqual([]);
    expect(d.bufferedBytes).toBe(2);
    const d2 = new WkprotoDecoder({ maxRemainingLength: 100 });
    let err: unknown;
    try {
      d2.push(Buffer.from([0x90, 0xe5]), () => undefined);
      d2.push(Buffer.from([0x00]), () => undefined);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(WkprotoDecodeError);
    expect((err as WkprotoDecodeError).code).toBe('REMAINING_LENGTH_TOO_LARGE');
    expect(d2.bufferedBytes).toBe(0);
    expect(() => d2.push(Buffer.from([0x70]), () => undefined)).toThrow(WkprotoDecodeError);
  });

  it('holds at most one body plus a header while a 1 MiB packet trickles in', () => {
    const frame = encodePacket({ type: PacketType.EVENT, id: '', eventType: '', timestamp: 0n, data: Buffer.alloc(1_048_564) }, 5);
    const d = new WkprotoDecoder();
    let max = 0;
    let got = 0;
    for (let i = 0; i < frame.length; i += 65_536) {
      d.push(frame.subarray(i, i + 65_536), () => got++);
      max = Math.max(max, d.bufferedBytes);
    }
    expect(got).toBe(1);
    expect(max).toBeLessThanOrEqual(1_048_576 + MAX_HEADER_BYTES);
    expect(d.bufferedBytes).toBe(0);
  });

  it('applies a version changed by the handler to the very next packet of the same chunk', () => {
    const connect = encodePacket(
      {
        type: PacketType.CONNECT,
        version: 3,
        deviceFlag: 0,
        deviceId: '',
        uid: 'u',
        token: '',
        clientTimestamp: 0n,
        clientKey: '',
      },
      3,
    );
    const send: WkPacket = {
      type: PacketType.SEND,
      setting: 0,
      clientSeq: 1,
      clientMsgNo: '',
      channelId: 'c',
      channelType: 1,
      expire: 9,
      msgKey: '',
      payload: Buffer.from('x'),
    };
    const d = new WkprotoDecoder({ version: 5 });
    const out: WkPacket[] = [];
    d.push(Buffer.concat([connect, encodePacket(send, 3)]), (p) => {
      out.push(p);
      if (p.type === PacketType.CONNECT) d.version = p.version;
    });
    expect(out[1]).toMatchObject({ type: PacketType.SEND, expire: 9, payload: new Uint8Array(Buffer.from('x')) });
  });

  it('propagates a handler error and fails the decoder', () => {
    const d = new WkprotoDecoder();
    expect(() =>
      d.push(Buffer.from([0x70]), () => {
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(() => d.push(Buffer.from([0x70]), () => undefined)).toThrow('boom');
  });
});
