import { describe, expect, it } from 'vitest';
import { PacketType, Setting } from './constants.ts';
import { decodePacket } from './decode.ts';
import { encodePacket } from './encode.ts';
import type { WkPacket } from './types.ts';

/** Hex with spaces → bytes. Every vector below was worked out by hand from realtime.md §2. */
const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const bytes = (s: string): Buffer => Buffer.from(s, 'utf8');

interface Vector {
  name: string;
  version: number;
  packet: WkPacket;
  wire: string;
}

const vectors: Vector[] = [
  {
    name: 'CONNECT v5',
    version: 5,
    packet: {
      type: PacketType.CONNECT,
      version: 5,
      deviceFlag: 1,
      deviceId: 'd',
      uid: 'u1',
      token: 't',
      clientTimestamp: 0x0102030405060708n,
      clientKey: 'k',
    },
    // 0x10, len 23, version, flag, "d", "u1", "t", i64, "k"
    wire: '10 17  05 01  0001 64  0002 7531  0001 74  0102030405060708  0001 6b',
  },
  {
    name: 'CONNACK v5 with HasServerVersion and node_id',
    version: 5,
    packet: { type: PacketType.CONNACK, serverVersion: 5, timeDiff: -3n, reasonCode: 1, serverKey: 'K', salt: 'S', nodeId: 1n },
    wire: '21 18  05  fffffffffffffffd  01  0001 4b  0001 53  0000000000000001',
  },
  {
    name: 'CONNACK v2 without server version or node_id',
    version: 2,
    packet: { type: PacketType.CONNACK, timeDiff: 0n, reasonCode: 2, serverKey: '', salt: '' },
    wire: '20 0d  0000000000000000  02  0000  0000',
  },
  {
    name: 'SEND v5 (RedDot, expire, empty msg_key)',
    version: 5,
    packet: {
      type: PacketType.SEND,
      redDot: true,
      setting: 0,
      clientSeq: 1,
      clientMsgNo: 'm',
      channelId: 'c',
      channelType: 1,
      expire: 0,
      msgKey: '',
      payload: bytes('hi'),
    },
    wire: '32 14  00  00000001  0001 6d  0001 63  01  00000000  0000  6869',
  },
  {
    name: 'SEND v2 with stream_no and topic, no expire',
    version: 2,
    packet: {
      type: PacketType.SEND,
      setting: Setting.STREAM | Setting.TOPIC,
      clientSeq: 2,
      clientMsgNo: '',
      streamNo: 's',
      channelId: 'c',
      channelType: 2,
      msgKey: 'k',
      topic: 't',
      payload: bytes('x'),
    },
    wire: '30 15  0a  00000002  0000  0001 73  0001 63  02  0001 6b  0001 74  78',
  },
  {
    name: 'SENDACK v5 (u32 seq, no trailer)',
    version: 5,
    packet: { type: PacketType.SENDACK, messageId: 0x0102030405060708n, clientSeq: 7, messageSeq: 9n, reasonCode: 1 },
    wire: '40 11  0102030405060708  00000007  00000009  01',
  },
  {
    name: 'SENDACK v6 (u64 seq, client_msg_no trailer)',
    version: 6,
    packet: { type: PacketType.SENDACK, messageId: 1n, clientSeq: 7, messageSeq: 0x1_0000_0000n, reasonCode: 1, clientMsgNo: 'm' },
    wire: '40 18  0000000000000001  00000007  0000000100000000  01  0001 6d',
  },
  {
    name: 'RECV v5 (RedDot, expire, u32 seq)',
    version: 5,
    packet: {
      type: PacketType.RECV,
      redDot: true,
      setting: 0,
      msgKey: 'k',
      fromUid: 'a',
      channelId: 'b',
      channelType: 1,
      expire: 60,
      clientMsgNo: 'm',
      messageId: 1n,
      messageSeq: 2n,
      timestamp: 3,
      payload: bytes('p'),
    },
    wire: '52 23  00  0001 6b  0001 61  0001 62  01  0000003c  0001 6d  0000000000000001  00000002  00000003  70',
  },
  {
    name: 'RECV v6 (u64 seq, topic)',
    version: 6,
    packet: {
      type: PacketType.RECV,
      setting: Setting.TOPIC,
      msgKey: '',
      fromUid: 'a',
      channelId: 'b',
      channelType: 2,
      expire: 0,
      clientMsgNo: '',
      messageId: 5n,
      messageSeq: 6n,
      timestamp: 7,
      topic: 't',
      payload: bytes(''),
    },
    wire: '50 27  08  0000  0001 61  0001 62  02  00000000  0000  0000000000000005  0000000000000006  00000007  0001 74',
  },
  {
    name: 'RECV v3 with stream fields',
    version: 3,
    packet: {
      type: PacketType.RECV,
      setting: Setting.STREAM,
      msgKey: '',
      fromUid: 'a',
      channelId: 'b',
      channelType: 1,
      expire: 1,
      clientMsgNo: '',
      streamFlag: 2,
      streamNo: 's',
      streamId: 9n,
      messageId: 1n,
      messageSeq: 1n,
      timestamp: 0,
      payload: bytes('z'),
    },
    wire: '50 2d  02  0000  0001 61  0001 62  01  00000001  0000  02 0001 73 0000000000000009  0000000000000001  00000001  00000000  7a',
  },
  {
    name: 'RECVACK v5',
    version: 5,
    packet: { type: PacketType.RECVACK, messageId: -1n, messageSeq: 5n },
    wire: '60 0c  ffffffffffffffff  00000005',
  },
  {
    name: 'RECVACK v6 (flags echoed)',
    version: 6,
    packet: { type: PacketType.RECVACK, syncOnce: true, noPersist: true, messageId: 2n, messageSeq: 5n },
    wire: '65 10  0000000000000002  0000000000000005',
  },
  { name: 'PING', version: 5, packet: { type: PacketType.PING }, wire: '70' },
  { name: 'PONG', version: 5, packet: { type: PacketType.PONG }, wire: '80' },
  {
    name: 'DISCONNECT',
    version: 5,
    packet: { type: PacketType.DISCONNECT, reasonCode: 12, reason: 'x' },
    wire: '90 04  0c  0001 78',
  },
  {
    name: 'SUB',
    version: 5,
    packet: { type: PacketType.SUB, setting: 0, subNo: 'n', channelId: 'c', channelType: 2, action: 1, param: '' },
    wire: 'a0 0b  00  0001 6e  0001 63  02  01  0000',
  },
  {
    name: 'SUBACK',
    version: 5,
    packet: { type: PacketType.SUBACK, subNo: 'n', channelId: 'c', channelType: 2, action: 0, reasonCode: 1 },
    wire: 'b0 09  0001 6e  0001 63  02  00  01',
  },
  {
    name: 'EVENT (DUP flag)',
    version: 6,
    packet: { type: PacketType.EVENT, dup: true, id: '', eventType: 'e', timestamp: 1000n, data: hex('0102') },
    wire: 'c8 0f  0000  0001 65  00000000000003e8  0102',
  },
];

describe('hand-written byte vectors', () => {
  for (const v of vectors) {
    it(`${v.name}: encodes to the exact bytes and decodes back`, () => {
      const wire = hex(v.wire);
      expect(encodePacket(v.packet, v.version).toString('hex')).toBe(wire.toString('hex'));
      const decoded = decodePacket(wire, v.version) as unknown as Record<string, unknown>;
      for (const [k, val] of Object.entries(v.packet)) {
        if (val instanceof Uint8Array) expect(Buffer.from(decoded[k] as Uint8Array).equals(Buffer.from(val))).toBe(true);
        else expect(decoded[k], k).toStrictEqual(val);
      }
    });
  }

  it('writes a 2-byte varint for a 200-byte body and a 3-byte one for 16384', () => {
    const small = encodePacket({ type: PacketType.EVENT, id: '', eventType: '', timestamp: 0n, data: Buffer.alloc(188) }, 5);
    expect(small.subarray(0, 3).toString('hex')).toBe('c0c801');
    const big = encodePacket({ type: PacketType.EVENT, id: '', eventType: '', timestamp: 0n, data: Buffer.alloc(16372) }, 5);
    expect(big.subarray(0, 4).toString('hex')).toBe('c0808001');
    expect(big.length).toBe(4 + 16384);
  });

  it('reads a SENDACK trailer-less at V6 and ignores unknown trailing CONNACK bytes', () => {
    const ack = decodePacket(hex('40 15  0000000000000001  00000002  0000000000000003  01'), 6);
    expect(ack).toMatchObject({ messageId: 1n, clientSeq: 2, messageSeq: 3n, reasonCode: 1, clientMsgNo: '' });
    const connack = decodePacket(hex('21 18  04  0000000000000000  01  0000  0000  0000000000000007  abcd'), 4);
    expect(connack).toMatchObject({ serverVersion: 4, reasonCode: 1, nodeId: 7n });
  });
});
