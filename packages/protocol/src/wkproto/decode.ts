/**
 * Packet body decoders. They read in place from the caller's buffer; `payload`
 * and `data` are views into it. Bytes after the last defined field are
 * ignored (old peers ignore trailers; SENDACK's client_msg_no is one).
 */
import { Buffer } from 'node:buffer';
import {
  CONNACK_HAS_SERVER_VERSION,
  HeaderFlag,
  LATEST_PROTOCOL_VERSION,
  MAX_REMAINING_LENGTH,
  MIN_PROTOCOL_VERSION,
  PacketType,
  Setting,
} from './constants.ts';
import { ByteReader } from './bytes.ts';
import { WkprotoDecodeError } from './errors.ts';
import { readFrameHeader, type FrameHeader } from './varint.ts';
import type { RecvPacket, SendPacket, WkPacket } from './types.ts';

const readSeq = (r: ByteReader, v: number): bigint => (v <= 5 ? BigInt(r.u32('messageSeq')) : r.u64('messageSeq'));
const hasStreamFields = (setting: number, v: number): boolean => v >= 2 && v <= 4 && (setting & Setting.STREAM) !== 0;

function decodeSend(r: ByteReader, flags: number, v: number): SendPacket {
  const setting = r.u8('setting');
  const clientSeq = r.u32('clientSeq');
  const clientMsgNo = r.str('clientMsgNo');
  const streamNo = hasStreamFields(setting, v) ? r.str('streamNo') : '';
  const channelId = r.str('channelId');
  const channelType = r.u8('channelType');
  const expire = v >= 3 ? r.u32('expire') : 0;
  const msgKey = r.str('msgKey');
  const topic = setting & Setting.TOPIC ? r.str('topic') : '';
  // The flags written out, not spread from `flagsOf`: a spread copies them through a generic builtin per packet.
  return {
    type: PacketType.SEND,
    noPersist: (flags & HeaderFlag.NO_PERSIST) !== 0,
    redDot: (flags & HeaderFlag.RED_DOT) !== 0,
    syncOnce: (flags & HeaderFlag.SYNC_ONCE) !== 0,
    dup: (flags & HeaderFlag.DUP) !== 0,
    setting,
    clientSeq,
    clientMsgNo,
    streamNo,
    channelId,
    channelType,
    expire,
    msgKey,
    topic,
    payload: r.restView(),
  };
}

function decodeRecv(r: ByteReader, flags: number, v: number): RecvPacket {
  const setting = r.u8('setting');
  const msgKey = r.str('msgKey');
  const fromUid = r.str('fromUid');
  const channelId = r.str('channelId');
  const channelType = r.u8('channelType');
  const expire = v >= 3 ? r.u32('expire') : 0;
  const clientMsgNo = r.str('clientMsgNo');
  let streamFlag = 0;
  let streamNo = '';
  let streamId = 0n;
  if (hasStreamFields(setting, v)) {
    streamFlag = r.u8('streamFlag');
    streamNo = r.str('streamNo');
    streamId = r.u64('streamId');
  }
  const messageId = r.i64('messageId');
  const messageSeq = readSeq(r, v);
  const timestamp = r.i32('timestamp');
  const topic = setting & Setting.TOPIC ? r.str('topic') : '';
  return {
    type: PacketType.RECV,
    ...flagsOf(flags),
    setting,
    msgKey,
    fromUid,
    channelId,
    channelType,
    expire,
    clientMsgNo,
    streamFlag,
    streamNo,
    streamId,
    messageId,
    messageSeq,
    timestamp,
    topic,
    payload: r.rest(),
  };
}

/** Header flag nibble → the four booleans. */
export function flagsOf(flags: number): { noPersist: boolean; redDot: boolean; syncOnce: boolean; dup: boolean } {
  return {
    noPersist: (flags & HeaderFlag.NO_PERSIST) !== 0,
    redDot: (flags & HeaderFlag.RED_DOT) !== 0,
    syncOnce: (flags & HeaderFlag.SYNC_ONCE) !== 0,
    dup: (flags & HeaderFlag.DUP) !== 0,
  };
}

/**
 * Decodes the body `buf[start, end)` of a frame of `type` with header `flags`
 * for a session at protocol `version`. Throws {@link WkprotoDecodeError}.
 */
export function decodeBody(type: number, flags: number, buf: Buffer, start: number, end: number, version: number): WkPacket {
  const v = version;
  const r = new ByteReader(buf, start, end);
  switch (type) {
    case PacketType.CONNECT:
      return {
        type: PacketType.CONNECT,
        ...flagsOf(flags),
        version: r.u8('version'),
        deviceFlag: r.u8('deviceFlag'),
        deviceId: r.str('deviceId'),
        uid: r.str('uid'),
        token: r.str('token'),
        clientTimestamp: r.i64('clientTimestamp'),
        clientKey: r.str('clientKey'),
      };
    case PacketType.CONNACK: {
      const serverVersion = flags & CONNACK_HAS_SERVER_VERSION ? r.u8('serverVersion') : undefined;
      const timeDiff = r.i64('timeDiff');
      const reasonCode = r.u8('reasonCode');
      const serverKey = r.str('serverKey');
      const salt = r.str('salt');
      const nodeId = v >= 4 && r.remaining >= 8 ? r.u64('nodeId') : 0n;
      const p: WkPacket = { type: PacketType.CONNACK, timeDiff, reasonCode, serverKey, salt, nodeId };
      if (serverVersion !== undefined) p.serverVersion = serverVersion;
      return p;
    }
    case PacketType.SEND:
      return decodeSend(r, flags, v);
    case PacketType.SENDACK:
      return {
        type: PacketType.SENDACK,
        ...flagsOf(flags),
        messageId: r.i64('messageId'),
        clientSeq: r.u32('clientSeq'),
        messageSeq: readSeq(r, v),
        reasonCode: r.u8('reasonCode'),
        clientMsgNo: r.remaining > 0 ? r.str('clientMsgNo') : '',
      };
    case PacketType.RECV:
      return decodeRecv(r, flags, v);
    case PacketType.RECVACK:
      return { type: PacketType.RECVACK, ...flagsOf(flags), messageId: r.i64('messageId'), messageSeq: readSeq(r, v) };
    case PacketType.PING:
      return { type: PacketType.PING };
    case PacketType.PONG:
      return { type: PacketType.PONG };
    case PacketType.DISCONNECT:
      return { type: PacketType.DISCONNECT, ...flagsOf(flags), reasonCode: r.u8('reasonCode'), reason: r.str('reason') };
    case PacketType.SUB:
      return {
        type: PacketType.SUB,
        ...flagsOf(flags),
        setting: r.u8('setting'),
        subNo: r.str('subNo'),
        channelId: r.str('channelId'),
        channelType: r.u8('channelType'),
        action: r.u8('action'),
        param: r.str('param'),
      };
    case PacketType.SUBACK:
      return {
        type: PacketType.SUBACK,
        ...flagsOf(flags),
        subNo: r.str('subNo'),
        channelId: r.str('channelId'),
        channelType: r.u8('channelType'),
        action: r.u8('action'),
        reasonCode: r.u8('reasonCode'),
      };
    case PacketType.EVENT:
      return {
        type: PacketType.EVENT,
        ...flagsOf(flags),
        id: r.str('id'),
        eventType: r.str('eventType'),
        timestamp: r.i64('timestamp'),
        data: r.rest(),
      };
    default:
      throw new WkprotoDecodeError('UNKNOWN_PACKET_TYPE', `packet type ${type}`);
  }
}

/** Throws unless `version` is an integer in 1..6. */
export function assertDecodeVersion(version: number): void {
  if (!Number.isInteger(version) || version < MIN_PROTOCOL_VERSION || version > LATEST_PROTOCOL_VERSION) {
    throw new WkprotoDecodeError(
      'BAD_VERSION',
      `protocol version ${version} is not in [${MIN_PROTOCOL_VERSION}, ${LATEST_PROTOCOL_VERSION}]`,
    );
  }
}

/**
 * Decodes exactly one complete frame (header + body, nothing after it) at
 * protocol `version`. For streams use {@link WkprotoDecoder} instead.
 */
export function decodePacket(frame: Uint8Array, version: number, maxRemainingLength?: number): WkPacket {
  assertDecodeVersion(version);
  const buf = Buffer.isBuffer(frame) ? frame : Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength);
  const h: FrameHeader = { type: 0, flags: 0, headerSize: 0, remainingLength: 0 };
  const max = maxRemainingLength ?? MAX_REMAINING_LENGTH;
  if (!readFrameHeader(buf, 0, buf.length, max, h)) throw new WkprotoDecodeError('TRUNCATED', 'incomplete fixed header');
  const end = h.headerSize + h.remainingLength;
  if (end !== buf.length) {
    throw new WkprotoDecodeError('TRUNCATED', `frame declares ${end} bytes but ${buf.length} were given`);
  }
  return decodeBody(h.type, h.flags, buf, h.headerSize, end, version);
}
