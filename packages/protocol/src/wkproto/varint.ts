/**
 * Fixed header + MQTT-style remaining-length varint (realtime.md §2.2): 7 data
 * bits per byte, least-significant group first, bit 7 = continuation, at most
 * 4 bytes, value ≤ the caller's limit (1 MiB by contract).
 */
import { MAX_REMAINING_LENGTH, MAX_VARINT_BYTES, PacketType } from './constants.ts';
import { WkprotoDecodeError, WkprotoEncodeError } from './errors.ts';

/** Bytes the varint for `length` occupies (1-4). */
export function varintSize(length: number): number {
  if (length < 0x80) return 1;
  if (length < 0x4000) return 2;
  if (length < 0x20_0000) return 3;
  return 4;
}

/** Writes the varint for `length` at `pos` and returns the position after it. */
export function writeVarint(buf: Buffer, pos: number, length: number): number {
  if (!Number.isInteger(length) || length < 0 || length > MAX_REMAINING_LENGTH) {
    throw new WkprotoEncodeError(`remaining length ${length} is outside [0, ${MAX_REMAINING_LENGTH}]`);
  }
  let rest = length;
  do {
    let digit = rest & 0x7f;
    rest >>>= 7;
    if (rest > 0) digit |= 0x80;
    buf[pos++] = digit;
  } while (rest > 0);
  return pos;
}

/** A parsed fixed header. `headerSize` = 1 + varint bytes (1 for PING/PONG). */
export interface FrameHeader {
  type: number;
  flags: number;
  headerSize: number;
  remainingLength: number;
}

/**
 * Parses the fixed header at `buf[pos, end)`. Returns `undefined` when more
 * bytes are needed; throws {@link WkprotoDecodeError} for type 0 or 13-15, a
 * varint longer than 4 bytes, or a length above `maxRemainingLength`.
 * `out` is reused by the caller to avoid an allocation per frame.
 */
export function readFrameHeader(
  buf: Uint8Array,
  pos: number,
  end: number,
  maxRemainingLength: number,
  out: FrameHeader,
): FrameHeader | undefined {
  if (pos >= end) return undefined;
  const b0 = buf[pos] as number;
  const type = b0 >>> 4;
  if (type < PacketType.CONNECT || type > PacketType.EVENT) {
    throw new WkprotoDecodeError('UNKNOWN_PACKET_TYPE', `packet type ${type} (byte 0x${b0.toString(16).padStart(2, '0')})`);
  }
  out.type = type;
  out.flags = b0 & 0x0f;
  if (type === PacketType.PING || type === PacketType.PONG) {
    out.headerSize = 1;
    out.remainingLength = 0;
    return out;
  }
  let value = 0;
  let shift = 0;
  for (let i = 1; i <= MAX_VARINT_BYTES; i++) {
    if (pos + i >= end) return undefined;
    const digit = buf[pos + i] as number;
    // At most 4 digits: shift ≤ 21, so the value stays below 2^28 and shifts stay exact (`2 ** shift` was a call to pow).
    value |= (digit & 0x7f) << shift;
    if ((digit & 0x80) === 0) {
      if (value > maxRemainingLength) {
        throw new WkprotoDecodeError('REMAINING_LENGTH_TOO_LARGE', `remaining length ${value} exceeds ${maxRemainingLength}`);
      }
      out.headerSize = 1 + i;
      out.remainingLength = value;
      return out;
    }
    shift += 7;
  }
  throw new WkprotoDecodeError('VARINT_TOO_LONG', `remaining-length varint longer than ${MAX_VARINT_BYTES} bytes`);
}
