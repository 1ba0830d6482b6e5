/**
 * A RECV body read in place, for a client's receive hot path: field positions
 * instead of strings, BigInts and a packet object. {@link scanRecv} only
 * accepts the common shape (no stream fields, ASCII strings, a well-formed
 * body); for anything else it returns false and the caller decodes the body
 * with the reference decoder ({@link decodeBody}), which also reports errors.
 * With ASCII strings the sign text {@link WkSessionCrypto.verifyRecvView}
 * builds from the bytes is exactly the one the reference path builds from the
 * decoded fields (UTF-8 decode and re-encode of ASCII is the identity).
 */
import { Buffer } from 'node:buffer';
import { PacketType, Setting } from './constants.ts';

/** Field positions of one RECV body in `buf`; filled by {@link scanRecv}. */
export interface RecvView {
  buf: Buffer;
  setting: number;
  /** Header flag nibble of the frame. */
  flags: number;
  msgKeyAt: number;
  msgKeyLen: number;
  fromUidAt: number;
  fromUidLen: number;
  channelIdAt: number;
  channelIdLen: number;
  channelType: number;
  clientMsgNoAt: number;
  clientMsgNoLen: number;
  /** The 8 bytes of the (signed) message id. */
  messageIdAt: number;
  /** The message seq: 4 bytes (version ≤ 5) or 8 (version 6). */
  messageSeqAt: number;
  messageSeqLen: number;
  timestamp: number;
  /** The payload is `buf[payloadAt, end)`. */
  payloadAt: number;
  end: number;
}

/** An empty view to fill. */
export function newRecvView(): RecvView {
  return {
    buf: Buffer.alloc(0),
    setting: 0,
    flags: 0,
    msgKeyAt: 0,
    msgKeyLen: 0,
    fromUidAt: 0,
    fromUidLen: 0,
    channelIdAt: 0,
    channelIdLen: 0,
    channelType: 0,
    clientMsgNoAt: 0,
    clientMsgNoLen: 0,
    messageIdAt: 0,
    messageSeqAt: 0,
    messageSeqLen: 0,
    timestamp: 0,
    payloadAt: 0,
    end: 0,
  };
}

/** Length of the ASCII string field at `pos` (2-byte length first), or -1 when it is negative, too long or not ASCII. */
function asciiField(buf: Buffer, pos: number, end: number): number {
  if (end - pos < 2) return -1;
  const len = (buf[pos]! << 8) | buf[pos + 1]!;
  if (len > 0x7fff || end - pos - 2 < len) return -1;
  for (let i = pos + 2; i < pos + 2 + len; i++) if (buf[i]! >= 0x80) return -1;
  return len;
}

/**
 * Reads the RECV body `buf[start, end)` at protocol `version` into `v`.
 * Returns false (v partly filled) when the body is not of the common shape
 * the fast path handles; the reference decoder then decides.
 */
export function scanRecv(buf: Buffer, start: number, end: number, version: number, flags: number, v: RecvView): boolean {
  let p = start;
  if (p >= end) return false;
  const setting = buf[p++]!;
  if (version >= 2 && version <= 4 && (setting & Setting.STREAM) !== 0) return false;
  if ((setting & Setting.TOPIC) !== 0) return false;
  v.buf = buf;
  v.setting = setting;
  v.flags = flags;
  let n = asciiField(buf, p, end);
  if (n < 0) return false;
  v.msgKeyAt = p + 2;
  v.msgKeyLen = n;
  p += 2 + n;
  n = asciiField(buf, p, end);
  if (n < 0) return false;
  v.fromUidAt = p + 2;
  v.fromUidLen = n;
  p += 2 + n;
  n = asciiField(buf, p, end);
  if (n < 0) return false;
  v.channelIdAt = p + 2;
  v.channelIdLen = n;
  p += 2 + n;
  if (p >= end) return false;
  v.channelType = buf[p++]!;
  if (version >= 3) p += 4; // expire
  n = asciiField(buf, p, end);
  if (n < 0) return false;
  v.clientMsgNoAt = p + 2;
  v.clientMsgNoLen = n;
  p += 2 + n;
  const seqLen = version <= 5 ? 4 : 8;
  if (end - p < 8 + seqLen + 4) return false;
  v.messageIdAt = p;
  v.messageSeqAt = p + 8;
  v.messageSeqLen = seqLen;
  p += 8 + seqLen;
  v.timestamp = buf.readInt32BE(p);
  v.payloadAt = p + 4;
  v.end = end;
  return true;
}

const TWO_32 = 4294967296;
const GROUP = 1_000_000;
/** The 6-digit groups of one conversion, least significant first (a u64 has at most 4). */
const scratchGroups: number[] = [0, 0, 0, 0];

// No `%` below: on numbers past int32 V8 computes it with a call to fmod.
// Each quotient is a floor of a correctly rounded double division, then
// corrected by its remainder, so it is exact for every value below 2^53.

/** ⌊a / 10^6⌋ exactly, for an integer 0 ≤ a < 2^53. */
function quotient(a: number): number {
  const q = Math.floor(a / GROUP);
  const r = a - q * GROUP;
  return r < 0 ? q - 1 : r >= GROUP ? q + 1 : q;
}

/**
 * Writes the decimal digits of the unsigned 64-bit integer hi·2^32 + lo at
 * `pos` in `out` (in 6-digit groups, all arithmetic below 2^53: no BigInt, no
 * precision loss); returns the position after them.
 */
function writeU64Decimal(out: Buffer, pos: number, hi: number, lo: number): number {
  const groups: number[] = scratchGroups;
  let count = 0;
  while (hi > 0) {
    const q = quotient(hi);
    const r = hi - q * GROUP;
    hi = q;
    const t = r * TWO_32 + lo;
    lo = quotient(t);
    groups[count++] = t - lo * GROUP;
  }
  // hi is 0: lo < 2^32 is an exact number, and not 0 once a group was split off (the value was ≥ 2^32).
  pos = writeUintDecimal(out, pos, lo);
  while (count > 0) pos = writePadded6(out, pos, groups[--count]!);
  return pos;
}

/** Powers of ten up to 10^15, to count digits. */
const POW10 = Array.from({ length: 16 }, (_, i) => 10 ** i);

/** The digits of `x`, an integer in [0, 2^53). */
export function writeUintDecimal(out: Buffer, pos: number, x: number): number {
  let digits = 1;
  while (digits < 16 && x >= POW10[digits]!) digits++;
  for (let i = pos + digits - 1; i > pos; i--) {
    const q = Math.floor(x / 10);
    out[i] = 0x30 + (x - q * 10);
    x = q;
  }
  out[pos] = 0x30 + x;
  return pos + digits;
}

/** Exactly six digits of `g` (< 10^6), zero-padded. */
function writePadded6(out: Buffer, pos: number, g: number): number {
  for (let i = pos + 5; i >= pos; i--) {
    const q = (g / 10) | 0;
    out[i] = 0x30 + (g - q * 10);
    g = q;
  }
  return pos + 6;
}

/** Writes the decimal text of the signed big-endian int64 at `buf[at]` (what `BigInt.toString()` gives). */
export function writeI64Decimal(out: Buffer, pos: number, buf: Buffer, at: number): number {
  let hi = buf.readUInt32BE(at);
  let lo = buf.readUInt32BE(at + 4);
  if (hi >= 0x8000_0000) {
    // Two's complement magnitude: ~x + 1.
    out[pos++] = 0x2d; // '-'
    hi = ~hi >>> 0;
    lo = ~lo >>> 0;
    lo = lo + 1;
    if (lo === TWO_32) {
      lo = 0;
      hi = (hi + 1) >>> 0;
    }
  }
  return writeU64Decimal(out, pos, hi, lo);
}

/** Writes the decimal text of the unsigned big-endian integer of `len` (4 or 8) bytes at `buf[at]`. */
export function writeUDecimal(out: Buffer, pos: number, buf: Buffer, at: number, len: number): number {
  if (len === 4) return writeUintDecimal(out, pos, buf.readUInt32BE(at));
  return writeU64Decimal(out, pos, buf.readUInt32BE(at), buf.readUInt32BE(at + 4));
}

/** Writes the decimal text of the int32 `x`. */
export function writeI32Decimal(out: Buffer, pos: number, x: number): number {
  if (x < 0) {
    out[pos++] = 0x2d;
    return writeUintDecimal(out, pos, -x);
  }
  return writeUintDecimal(out, pos, x);
}

/** Size of a RECVACK frame at `version`: header (2) + message id (8) + seq (4 or 8). */
export const recvackFrameBytes = (version: number): number => 2 + 8 + (version <= 5 ? 4 : 8);

/**
 * Writes the RECVACK of the RECV `v` at `out[pos]` (byte for byte
 * `encodeRecvack(messageId, messageSeq, version)`: the id and seq bytes are
 * copied from the RECV, whose seq has the same width); returns the position after it.
 */
export function writeRecvack(out: Buffer, pos: number, v: RecvView): number {
  out[pos] = PacketType.RECVACK << 4;
  out[pos + 1] = 8 + v.messageSeqLen;
  const b = v.buf;
  let o = pos + 2;
  for (let i = v.messageIdAt; i < v.messageSeqAt + v.messageSeqLen; i++) out[o++] = b[i]!;
  return o;
}
