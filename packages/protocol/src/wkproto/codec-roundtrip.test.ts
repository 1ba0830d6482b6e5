import { describe, expect, it } from 'vitest';
import { PacketType, Setting } from './constants.ts';
import { decodePacket } from './decode.ts';
import { encodePacket, encodeRecvack, encodeSendack } from './encode.ts';
import { WkprotoDecodeError, WkprotoEncodeError } from './errors.ts';
import type { RecvPacket, SendPacket, WkPacket } from './types.ts';

const VERSIONS = [1, 2, 3, 4, 5, 6];
const u8 = (s: string): Buffer => Buffer.from(s, 'utf8');

/** One packet of every type with every optional field set and non-default. */
function samples(): WkPacket[] {
  return [
    {
      type: PacketType.CONNECT,
      version: 6,
      deviceFlag: 2,
      deviceId: 'dev-1W',
      uid: 'ünï',
      token: 'tok',
      clientTimestamp: 1_785_398_400_123n,
      clientKey: 'a'.repeat(44),
    },
    {
      type: PacketType.CONNACK,
      serverVersion: 6,
      timeDiff: -42n,
      reasonCode: 1,
      serverKey: 'K'.repeat(44),
      salt: 'S'.repeat(16),
      nodeId: 3n,
    },
    {
      type: PacketType.SEND,
      redDot: true,
      noPersist: true,
      syncOnce: true,
      dup: true,
      setting: Setting.RECEIPT | Setting.TOPIC | Setting.STREAM,
      clientSeq: 0xffff_ffff,
      clientMsgNo: 'cmn',
      streamNo: 'sn',
      channelId: 'a@b',
      channelType: 2,
      expire: 3600,
      msgKey: 'f'.repeat(32),
      topic: 'tp',
      payload: u8('{"type":1}'),
    },
    { type: PacketType.SENDACK, messageId: (1n << 62n) + 5n, clientSeq: 9, messageSeq: 0xffff_ffffn, reasonCode: 1, clientMsgNo: 'cmn' },
    {
      type: PacketType.RECV,
      redDot: true,
      setting: Setting.TOPIC | Setting.STREAM,
      msgKey: 'mk',
      fromUid: 'alice',
      channelId: 'bob',
      channelType: 1,
      expire: 7,
      clientMsgNo: 'c',
      streamFlag: 1,
      streamNo: 'sn',
      streamId: 77n,
      messageId: -(1n << 63n),
      messageSeq: 42n,
      timestamp: -1,
      topic: 'tp',
      payload: u8('payload'),
    },
    { type: PacketType.RECVACK, redDot: true, messageId: 123n, messageSeq: 4_000_000_000n },
    { type: PacketType.PING },
    { type: PacketType.PONG },
    { type: PacketType.DISCONNECT, reasonCode: 12, reason: 'login in other device' },
    { type: PacketType.SUB, setting: 0, subNo: 's', channelId: 'c', channelType: 2, action: 1, param: '{}' },
    { type: PacketType.SUBACK, subNo: 's', channelId: 'c', channelType: 2, action: 1, reasonCode: 3 },
    { type: PacketType.EVENT, id: 'e1', eventType: '_wk.bench.terminal_fence.v1', timestamp: 0n, data: u8('\x01abc') },
  ];
}

/** What the decoder yields for `p` at `v`: version-dependent fields fall back to defaults. */
function expectedAt(p: WkPacket, v: number): WkPacket {
  const flagDefaults = { noPersist: false, redDot: false, syncOnce: false, dup: false };
  const stream = v >= 2 && v <= 4;
  switch (p.type) {
    case PacketType.PING:
    case PacketType.PONG:
      return p;
    case PacketType.CONNACK:
      return { ...p, nodeId: v >= 4 ? (p.nodeId ?? 0n) : 0n };
    case PacketType.SEND: {
      const s: SendPacket = { ...flagDefaults, ...p, expire: v >= 3 ? (p.expire ?? 0) : 0 };
      if (!stream) s.streamNo = '';
      return s;
    }
    case PacketType.RECV: {
      const r: RecvPacket = { ...flagDefaults, ...p, expire: v >= 3 ? (p.expire ?? 0) : 0 };
      if (!stream) Object.assign(r, { streamFlag: 0, streamNo: '', streamId: 0n });
      return r;
    }
    default:
      return { ...flagDefaults, ...p };
  }
}

const norm = (p: WkPacket): unknown =>
  Object.fromEntries(Object.entries(p).map(([k, v]) => [k, v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v]));

describe('round trips: every packet type at every protocol version', () => {
  for (const v of VERSIONS) {
    for (const p of samples()) {
      it(`type ${p.type} at V${v}`, () => {
        const wire = encodePacket(p, v);
        const back = decodePacket(wire, v);
        expect(norm(back)).toStrictEqual(norm(expectedAt(p, v)));
        expect(encodePacket(back, v).equals(wire)).toBe(true);
      });
    }
  }

  it('a body that differs by version has the documented sizes (SEND: +expire at V3, stream only at V2-4)', () => {
    const send = samples()[2] as SendPacket;
    const sizes = VERSIONS.map((v) => encodePacket(send, v).length);
    const streamNo = 2 + 2;
    const expire = 4;
    expect(sizes[1]! - sizes[0]!).toBe(streamNo);
    expect(sizes[2]! - sizes[1]!).toBe(expire);
    expect(sizes[4]! - sizes[3]!).toBe(-streamNo);
    expect(sizes[5]).toBe(sizes[4]);
  });
});

describe('encode errors', () => {
  it('rejects a message_seq above 2^32-1 at V ≤ 5 and accepts it at V6', () => {
    const ack: WkPacket = { type: PacketType.SENDACK, messageId: 1n, clientSeq: 1, messageSeq: 1n << 32n, reasonCode: 1 };
    for (const v of [1, 2, 3, 4, 5]) expect(() => encodePacket(ack, v)).toThrow(WkprotoEncodeError);
    expect(decodePacket(encodePacket(ack, 6), 6)).toMatchObject({ messageSeq: 1n << 32n });
    const recvack: WkPacket = { type: PacketType.RECVACK, messageId: 1n, messageSeq: -1n };
    expect(() => encodePacket(recvack, 6)).toThrow(WkprotoEncodeError);
  });

  it('rejects over-long strings, out-of-range ints, bad versions and bodies over 1 MiB', () => {
    const disc = (reason: string, reasonCode = 1): WkPacket => ({ type: PacketType.DISCONNECT, reasonCode, reason });
    expect(encodePacket(disc('x'.repeat(32767)), 5).length).toBe(1 + 3 + 1 + 2 + 32767);
    expect(() => encodePacket(disc('x'.repeat(32768)), 5)).toThrow(/32767/);
    expect(() => encodePacket(disc('x', 256), 5)).toThrow(WkprotoEncodeError);
    expect(() => encodePacket(disc('x'), 0)).toThrow(WkprotoEncodeError);
    expect(() => encodePacket(disc('x'), 7)).toThrow(WkprotoEncodeError);
    const ev: WkPacket = { type: PacketType.EVENT, id: '', eventType: '', timestamp: 0n, data: Buffer.alloc(1_048_576) };
    expect(() => encodePacket(ev, 5)).toThrow(/exceeds/);
    expect(() => encodePacket({ ...ev, data: Buffer.alloc(1), timestamp: 1n << 63n }, 5)).toThrow(/int64/);
  });
});

describe('decode errors', () => {
  const bad = (hexStr: string, version = 5): unknown => {
    try {
      decodePacket(Buffer.from(hexStr.replace(/\s/g, ''), 'hex'), version);
    } catch (e) {
      return e instanceof WkprotoDecodeError ? e.code : e;
    }
    return 'no error';
  };

  it('reports truncation, negative and over-long string lengths, unknown types and bad versions', () => {
    expect(bad('40 03 000000')).toBe('TRUNCATED');
    expect(bad('90 03 01 8000')).toBe('BAD_STRING_LENGTH');
    expect(bad('90 04 01 0005 41')).toBe('BAD_STRING_LENGTH');
    expect(bad('00 00')).toBe('UNKNOWN_PACKET_TYPE');
    expect(bad('d0 00')).toBe('UNKNOWN_PACKET_TYPE');
    expect(bad('90 ff ff ff ff 01')).toBe('VARINT_TOO_LONG');
    expect(bad('90 81 80 40')).toBe('REMAINING_LENGTH_TOO_LARGE');
    expect(bad('70', 0)).toBe('BAD_VERSION');
  });
});

describe('encodeRecvack', () => {
  it('writes the same bytes as encodePacket at every version, and refuses what it refuses', () => {
    const ids = [0n, 1n, 1957234823423213568n, (1n << 63n) - 1n, -1n];
    const seqs = [0n, 42n, 0xffff_ffffn];
    for (let v = 1; v <= 6; v++) {
      for (const messageId of ids) {
        for (const messageSeq of [...seqs, ...(v === 6 ? [1n << 40n] : [])]) {
          const want = encodePacket({ type: PacketType.RECVACK, messageId, messageSeq }, v);
          expect(encodeRecvack(messageId, messageSeq, v).equals(want), `v${v} ${messageId} ${messageSeq}`).toBe(true);
        }
      }
    }
    expect(() => encodeRecvack(1n, 1n << 32n, 5)).toThrow(WkprotoEncodeError);
    expect(() => encodeRecvack(1n << 63n, 1n, 5)).toThrow(WkprotoEncodeError);
    expect(() => encodeRecvack(1n, 1n, 7)).toThrow(WkprotoEncodeError);
  });
});

describe('encodeSendack', () => {
  it('writes the same bytes as encodePacket at every version, and refuses what it refuses', () => {
    const ids = [0n, 1n, 1957234823423213568n, (1n << 63n) - 1n, -1n, -(1n << 63n), -(1n << 32n)];
    for (let v = 1; v <= 6; v++) {
      for (const messageId of ids) {
        for (const messageSeq of [0n, 42n, 0xffff_ffffn, ...(v === 6 ? [1n << 40n, (1n << 64n) - 1n] : [])]) {
          // ASCII (a loop writes it) up to the last ASCII character, and strings the UTF-8 encoder writes, one after ASCII.
          for (const clientMsgNo of ['', 'u1-17', 'x\u007f', 'é😀'.repeat(30), 'abc\u0080', 'm'.repeat(300)]) {
            for (const [clientSeq, reasonCode] of [
              [0, 1],
              [0xffff_ffff, 12],
            ] as const) {
              const want = encodePacket({ type: PacketType.SENDACK, messageId, clientSeq, messageSeq, reasonCode, clientMsgNo }, v);
              const got = encodeSendack(messageId, clientSeq, messageSeq, reasonCode, clientMsgNo, v);
              expect(got.equals(want), `v${v} ${messageId} ${messageSeq} ${clientMsgNo}`).toBe(true);
            }
          }
        }
      }
    }
    expect(() => encodeSendack(1n, 1, 1n << 32n, 1, '', 5)).toThrow(WkprotoEncodeError);
    expect(() => encodeSendack(1n << 63n, 1, 1n, 1, '', 5)).toThrow(WkprotoEncodeError);
    expect(() => encodeSendack(1n, 1, 1n, 1, '', 7)).toThrow(WkprotoEncodeError);
    expect(() => encodeSendack(-(1n << 63n) - 1n, 1, 1n, 1, '', 5)).toThrow(WkprotoEncodeError);
    expect(() => encodeSendack(1n, 1, 1n << 64n, 1, '', 6)).toThrow(WkprotoEncodeError);
    expect(() => encodeSendack(1n, 1, -1n, 1, '', 6)).toThrow(WkprotoEncodeError);
    expect(() => encodeSendack(1n, 1.5, 1n, 1, '', 5)).toThrow(/clientSeq/);
    expect(() => encodeSendack(1n, 2 ** 32, 1n, 1, '', 5)).toThrow(/clientSeq/);
    expect(() => encodeSendack(1n, 1, 1n, 256, '', 5)).toThrow(/reasonCode/);
    // Longer than a string field holds, in characters and (non-ASCII) only in UTF-8 bytes.
    expect(() => encodeSendack(1n, 1, 1n, 1, 'm'.repeat(32_768), 5)).toThrow(/clientMsgNo/);
    expect(() => encodeSendack(1n, 1, 1n, 1, 'é'.repeat(20_000), 5)).toThrow(/clientMsgNo/);
    expect(encodeSendack(1n, 1, 1n, 1, 'm'.repeat(32_767), 5).length).toBe(1 + 3 + 8 + 4 + 4 + 1 + 2 + 32_767);
  });
});
