/**
 * A deterministic corpus of valid WKProto frames (every packet type, small and
 * large bodies) shared by the stream-decoder tests and the fuzzer.
 */
import { PacketType, Setting } from '../src/wkproto/constants.ts';
import { encodePacket } from '../src/wkproto/encode.ts';
import type { WkPacket } from '../src/wkproto/types.ts';

/** Small deterministic PRNG (mulberry32) so every run sees the same bytes. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Packets of every type; `big` adds multi-kilobyte payloads (3-byte varints). */
export function corpusPackets(big = true): WkPacket[] {
  const payload = (n: number): Buffer => Buffer.alloc(n, 0x61 + (n % 26));
  const packets: WkPacket[] = [
    { type: PacketType.CONNECT, version: 5, deviceFlag: 1, deviceId: 'd1W', uid: 'u', token: 't', clientTimestamp: 1n, clientKey: 'k' },
    { type: PacketType.CONNACK, serverVersion: 5, timeDiff: 0n, reasonCode: 1, serverKey: 'sk', salt: 'salt', nodeId: 1n },
    { type: PacketType.PING },
    {
      type: PacketType.SEND,
      redDot: true,
      setting: Setting.TOPIC,
      clientSeq: 1,
      clientMsgNo: 'c1',
      channelId: 'bob',
      channelType: 1,
      expire: 0,
      msgKey: 'mk',
      topic: 't',
      payload: payload(10),
    },
    { type: PacketType.SENDACK, messageId: 99n, clientSeq: 1, messageSeq: 5n, reasonCode: 1, clientMsgNo: 'c1' },
    {
      type: PacketType.RECV,
      setting: 0,
      msgKey: 'mk',
      fromUid: 'a',
      channelId: 'b',
      channelType: 1,
      expire: 0,
      clientMsgNo: 'c',
      messageId: 1n,
      messageSeq: 2n,
      timestamp: 3,
      payload: payload(130),
    },
    { type: PacketType.RECVACK, messageId: 1n, messageSeq: 2n },
    { type: PacketType.PONG },
    { type: PacketType.DISCONNECT, reasonCode: 12, reason: 'kick' },
    { type: PacketType.SUB, setting: 0, subNo: 's', channelId: 'c', channelType: 2, action: 0, param: '' },
    { type: PacketType.SUBACK, subNo: 's', channelId: 'c', channelType: 2, action: 0, reasonCode: 1 },
    { type: PacketType.EVENT, id: 'e', eventType: 'x', timestamp: 5n, data: payload(3) },
  ];
  if (big) {
    packets.push({ type: PacketType.EVENT, id: '', eventType: 'big', timestamp: 0n, data: payload(20_000) });
    packets.push({
      type: PacketType.SEND,
      setting: 0,
      clientSeq: 2,
      clientMsgNo: 'c2',
      channelId: 'g',
      channelType: 2,
      expire: 0,
      msgKey: '',
      payload: payload(300),
    });
  }
  return packets;
}

/** The corpus encoded at `version`, one frame per entry. */
export function corpusFrames(version: number, big = true): Buffer[] {
  return corpusPackets(big).map((p) => encodePacket(p, version));
}
