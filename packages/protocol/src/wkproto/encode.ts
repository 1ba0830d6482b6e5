/**
 * Packet encoders. Each packet is sized exactly first, then written into one
 * freshly allocated buffer (one allocation, no copies, no growth).
 */
import { Buffer } from 'node:buffer';
import {
  CONNACK_HAS_SERVER_VERSION,
  HeaderFlag,
  LATEST_PROTOCOL_VERSION,
  MAX_STRING_BYTES,
  MAX_REMAINING_LENGTH,
  MIN_PROTOCOL_VERSION,
  PacketType,
  Setting,
} from './constants.ts';
import { ByteWriter, checkI64, checkInt, checkU64, putAsciiField, putInt64BE, putUint32BE, stringFieldSize as strSize } from './bytes.ts';
import { WkprotoEncodeError } from './errors.ts';
import { varintSize, writeVarint } from './varint.ts';
import type { FrameFlags, RecvPacket, SendPacket, WkPacket } from './types.ts';

export const U32_MAX_BIG = 0xffff_ffffn;

/** Throws unless `version` is an integer in 1..6. */
export function assertVersion(version: number): void {
  if (!Number.isInteger(version) || version < MIN_PROTOCOL_VERSION || version > LATEST_PROTOCOL_VERSION) {
    throw new WkprotoEncodeError(`protocol version ${version} is not in [${MIN_PROTOCOL_VERSION}, ${LATEST_PROTOCOL_VERSION}]`);
  }
}

/** The low nibble of byte 0 for the packet's flags. */
export function flagBits(p: FrameFlags): number {
  return (
    (p.noPersist ? HeaderFlag.NO_PERSIST : 0) |
    (p.redDot ? HeaderFlag.RED_DOT : 0) |
    (p.syncOnce ? HeaderFlag.SYNC_ONCE : 0) |
    (p.dup ? HeaderFlag.DUP : 0)
  );
}

/** Throws unless `seq` fits the messageSeq field of `version` (u32 up to 5, u64 from 6). */
function checkSeq(seq: bigint, version: number): void {
  if (version > 5) return checkU64(seq, 'messageSeq');
  if (seq < 0n || seq > U32_MAX_BIG) {
    throw new WkprotoEncodeError(`messageSeq ${seq} does not fit the u32 of protocol version ${version}`);
  }
}

function writeSeq(w: ByteWriter, seq: bigint, version: number): void {
  checkSeq(seq, version);
  if (version <= 5) {
    w.buf.writeUInt32BE(Number(seq), w.pos);
    w.pos += 4;
  } else {
    w.buf.writeBigUInt64BE(seq, w.pos);
    w.pos += 8;
  }
}

/** Bytes of a messageSeq at `version`. */
export const seqSize = (version: number): number => (version <= 5 ? 4 : 8);
/** Whether a SEND/RECV carries the stream fields (versions 2-4 with Setting.STREAM). */
export const hasStreamFields = (setting: number, version: number): boolean =>
  version >= 2 && version <= 4 && (setting & Setting.STREAM) !== 0;

function sendSize(p: SendPacket, v: number): number {
  let n = 1 + 4 + strSize(p.clientMsgNo, 'clientMsgNo') + strSize(p.channelId, 'channelId') + 1 + strSize(p.msgKey, 'msgKey');
  if (hasStreamFields(p.setting, v)) n += strSize(p.streamNo ?? '', 'streamNo');
  if (v >= 3) n += 4;
  if (p.setting & Setting.TOPIC) n += strSize(p.topic ?? '', 'topic');
  return n + p.payload.length;
}

function writeSend(w: ByteWriter, p: SendPacket, v: number): void {
  w.u8(p.setting, 'setting');
  w.u32(p.clientSeq, 'clientSeq');
  w.str(p.clientMsgNo);
  if (hasStreamFields(p.setting, v)) w.str(p.streamNo ?? '');
  w.str(p.channelId);
  w.u8(p.channelType, 'channelType');
  if (v >= 3) w.u32(p.expire ?? 0, 'expire');
  w.str(p.msgKey);
  if (p.setting & Setting.TOPIC) w.str(p.topic ?? '');
  w.bytes(p.payload);
}

function recvSize(p: RecvPacket, v: number): number {
  let n =
    1 +
    strSize(p.msgKey, 'msgKey') +
    strSize(p.fromUid, 'fromUid') +
    strSize(p.channelId, 'channelId') +
    1 +
    strSize(p.clientMsgNo, 'clientMsgNo') +
    8 +
    seqSize(v) +
    4;
  if (v >= 3) n += 4;
  if (hasStreamFields(p.setting, v)) n += 1 + strSize(p.streamNo ?? '', 'streamNo') + 8;
  if (p.setting & Setting.TOPIC) n += strSize(p.topic ?? '', 'topic');
  return n + p.payload.length;
}

function writeRecv(w: ByteWriter, p: RecvPacket, v: number): void {
  w.u8(p.setting, 'setting');
  w.str(p.msgKey);
  w.str(p.fromUid);
  w.str(p.channelId);
  w.u8(p.channelType, 'channelType');
  if (v >= 3) w.u32(p.expire ?? 0, 'expire');
  w.str(p.clientMsgNo);
  if (hasStreamFields(p.setting, v)) {
    w.u8(p.streamFlag ?? 0, 'streamFlag');
    w.str(p.streamNo ?? '');
    w.u64(p.streamId ?? 0n, 'streamId');
  }
  w.i64(p.messageId, 'messageId');
  writeSeq(w, p.messageSeq, v);
  w.i32(p.timestamp, 'timestamp');
  if (p.setting & Setting.TOPIC) w.str(p.topic ?? '');
  w.bytes(p.payload);
}

function bodySize(p: WkPacket, v: number): number {
  switch (p.type) {
    case PacketType.CONNECT:
      return (
        2 + strSize(p.deviceId, 'deviceId') + strSize(p.uid, 'uid') + strSize(p.token, 'token') + 8 + strSize(p.clientKey, 'clientKey')
      );
    case PacketType.CONNACK:
      return (
        (p.serverVersion !== undefined ? 1 : 0) + 8 + 1 + strSize(p.serverKey, 'serverKey') + strSize(p.salt, 'salt') + (v >= 4 ? 8 : 0)
      );
    case PacketType.SEND:
      return sendSize(p, v);
    case PacketType.SENDACK:
      return 8 + 4 + seqSize(v) + 1 + (p.clientMsgNo ? strSize(p.clientMsgNo, 'clientMsgNo') : 0);
    case PacketType.RECV:
      return recvSize(p, v);
    case PacketType.RECVACK:
      return 8 + seqSize(v);
    case PacketType.PING:
    case PacketType.PONG:
      return 0;
    case PacketType.DISCONNECT:
      return 1 + strSize(p.reason, 'reason');
    case PacketType.SUB:
      return 1 + strSize(p.subNo, 'subNo') + strSize(p.channelId, 'channelId') + 2 + strSize(p.param, 'param');
    case PacketType.SUBACK:
      return strSize(p.subNo, 'subNo') + strSize(p.channelId, 'channelId') + 3;
    case PacketType.EVENT:
      return strSize(p.id, 'id') + strSize(p.eventType, 'eventType') + 8 + p.data.length;
  }
}

function writeBody(w: ByteWriter, p: WkPacket, v: number): void {
  switch (p.type) {
    case PacketType.CONNECT:
      w.u8(p.version, 'version');
      w.u8(p.deviceFlag, 'deviceFlag');
      w.str(p.deviceId);
      w.str(p.uid);
      w.str(p.token);
      w.i64(p.clientTimestamp, 'clientTimestamp');
      w.str(p.clientKey);
      return;
    case PacketType.CONNACK:
      if (p.serverVersion !== undefined) w.u8(p.serverVersion, 'serverVersion');
      w.i64(p.timeDiff, 'timeDiff');
      w.u8(p.reasonCode, 'reasonCode');
      w.str(p.serverKey);
      w.str(p.salt);
      if (v >= 4) w.u64(p.nodeId ?? 0n, 'nodeId');
      return;
    case PacketType.SEND:
      return writeSend(w, p, v);
    case PacketType.SENDACK:
      w.i64(p.messageId, 'messageId');
      w.u32(p.clientSeq, 'clientSeq');
      writeSeq(w, p.messageSeq, v);
      w.u8(p.reasonCode, 'reasonCode');
      if (p.clientMsgNo) w.str(p.clientMsgNo);
      return;
    case PacketType.RECV:
      return writeRecv(w, p, v);
    case PacketType.RECVACK:
      w.i64(p.messageId, 'messageId');
      writeSeq(w, p.messageSeq, v);
      return;
    case PacketType.PING:
    case PacketType.PONG:
      return;
    case PacketType.DISCONNECT:
      w.u8(p.reasonCode, 'reasonCode');
      w.str(p.reason);
      return;
    case PacketType.SUB:
      w.u8(p.setting, 'setting');
      w.str(p.subNo);
      w.str(p.channelId);
      w.u8(p.channelType, 'channelType');
      w.u8(p.action, 'action');
      w.str(p.param);
      return;
    case PacketType.SUBACK:
      w.str(p.subNo);
      w.str(p.channelId);
      w.u8(p.channelType, 'channelType');
      w.u8(p.action, 'action');
      w.u8(p.reasonCode, 'reasonCode');
      return;
    case PacketType.EVENT:
      w.str(p.id);
      w.str(p.eventType);
      w.i64(p.timestamp, 'timestamp');
      w.bytes(p.data);
      return;
  }
}

/**
 * Encodes one packet as a complete frame for a session at protocol `version`
 * (1-6). Throws {@link WkprotoEncodeError} for values that do not fit the wire
 * (e.g. a messageSeq above 2^32-1 at V ≤ 5, a string over 32767 bytes, a body
 * over 1 MiB).
 */
export function encodePacket(p: WkPacket, version: number): Buffer {
  assertVersion(version);
  if (p.type === PacketType.PING || p.type === PacketType.PONG) {
    const one = Buffer.allocUnsafe(1);
    one[0] = p.type << 4;
    return one;
  }
  const flags = p.type === PacketType.CONNACK ? (p.serverVersion !== undefined ? CONNACK_HAS_SERVER_VERSION : 0) : flagBits(p);
  const body = bodySize(p, version);
  if (body > MAX_REMAINING_LENGTH) throw new WkprotoEncodeError(`packet body of ${body} bytes exceeds ${MAX_REMAINING_LENGTH}`);
  const buf = Buffer.allocUnsafe(1 + varintSize(body) + body);
  buf[0] = (p.type << 4) | flags;
  const w = new ByteWriter(buf, writeVarint(buf, 1, body));
  writeBody(w, p, version);
  if (w.pos !== buf.length) throw new WkprotoEncodeError(`internal size mismatch for packet type ${p.type}`);
  return buf;
}

/**
 * The SENDACK frame of a send's outcome at `version`, byte for byte what
 * {@link encodePacket} writes for `{ type: SENDACK, messageId, clientSeq,
 * messageSeq, reasonCode, clientMsgNo }`, without a packet object or the
 * generic sizing and dispatch (the server writes one per send).
 */
export function encodeSendack(
  messageId: bigint,
  clientSeq: number,
  messageSeq: bigint,
  reasonCode: number,
  clientMsgNo: string,
  version: number,
): Buffer {
  assertVersion(version);
  checkI64(messageId, 'messageId');
  checkInt(clientSeq, 0xffff_ffff, 'clientSeq');
  checkSeq(messageSeq, version);
  checkInt(reasonCode, 0xff, 'reasonCode');
  const m = clientMsgNo.length;
  // An ASCII client_msg_no (the usual) is one byte per character: written by a loop, not the UTF-8 encoder.
  if (m <= MAX_STRING_BYTES) {
    const buf = sendackFrame(messageId, clientSeq, messageSeq, reasonCode, m === 0 ? 0 : 2 + m, version);
    if (m === 0 || putAsciiField(buf, buf.length - 2 - m, clientMsgNo) >= 0) return buf;
  }
  const field = strSize(clientMsgNo, 'clientMsgNo');
  const buf = sendackFrame(messageId, clientSeq, messageSeq, reasonCode, field, version);
  const at = buf.length - field;
  buf.writeUInt16BE(buf.write(clientMsgNo, at + 2, 'utf8'), at);
  return buf;
}

/** A SENDACK frame of checked values with `stringBytes` left at its end for the client_msg_no field. */
function sendackFrame(
  messageId: bigint,
  clientSeq: number,
  messageSeq: bigint,
  reasonCode: number,
  stringBytes: number,
  version: number,
): Buffer {
  const seqBytes = seqSize(version);
  const body = 8 + 4 + seqBytes + 1 + stringBytes;
  const buf = Buffer.allocUnsafe(1 + varintSize(body) + body);
  buf[0] = PacketType.SENDACK << 4;
  let o = putInt64BE(buf, writeVarint(buf, 1, body), messageId);
  o = putUint32BE(buf, o, clientSeq);
  o = seqBytes === 4 ? putUint32BE(buf, o, Number(messageSeq)) : putInt64BE(buf, o, messageSeq);
  buf[o] = reasonCode;
  return buf;
}

/**
 * The RECVACK frame of (`messageId`, `messageSeq`) at `version`, byte for byte
 * what {@link encodePacket} writes, without its generic sizing (a client sends
 * one per received message).
 */
export function encodeRecvack(messageId: bigint, messageSeq: bigint, version: number): Buffer {
  assertVersion(version);
  const body = 8 + seqSize(version);
  const buf = Buffer.allocUnsafe(2 + body);
  buf[0] = PacketType.RECVACK << 4;
  buf[1] = body;
  const w = new ByteWriter(buf, 2);
  w.i64(messageId, 'messageId');
  writeSeq(w, messageSeq, version);
  return buf;
}
