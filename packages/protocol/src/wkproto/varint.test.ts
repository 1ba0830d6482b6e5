import { describe, expect, it } from 'vitest';
import { PacketType } from './constants.ts';
import { readFrameHeader, type FrameHeader } from './varint.ts';

/** The fixed header of a SEND whose remaining length is `value`, its varint written out by hand (4 bytes at most). */
function header(value: number): Buffer {
  const bytes = [PacketType.SEND << 4];
  let rest = value;
  do {
    const digit = rest % 128;
    rest = Math.floor(rest / 128);
    bytes.push(rest > 0 ? digit | 0x80 : digit);
  } while (rest > 0);
  return Buffer.from(bytes);
}

describe('readFrameHeader', () => {
  it('reads every varint width up to 4 bytes, at and around each width boundary', () => {
    const out: FrameHeader = { type: 0, flags: 0, headerSize: 0, remainingLength: 0 };
    const max = 2 ** 28 - 1;
    for (const value of [0, 1, 127, 128, 300, 16_383, 16_384, 1_048_576, 2_097_151, 2_097_152, 123_456_789, max]) {
      const buf = header(value);
      expect(readFrameHeader(buf, 0, buf.length, max, out), String(value)).toBe(out);
      expect(out.remainingLength, String(value)).toBe(value);
      expect(out.headerSize, String(value)).toBe(buf.length);
      // One byte short: more bytes needed, nothing thrown.
      expect(readFrameHeader(buf, 0, buf.length - 1, max, out), `${value} cut`).toBeUndefined();
    }
  });
});
