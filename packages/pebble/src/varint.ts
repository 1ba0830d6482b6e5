/**
 * Unsigned LEB128 decoding. Results are JS numbers; values above 2^53 cannot be
 * represented exactly and are reported as errors (callers that may see larger
 * values, such as sentinel sequence numbers, go through internal-key trailers instead).
 */

/** Result slot for {@link readUvarint}: the decoded value and the offset just past it. */
export interface VarintCursor {
  value: number;
  pos: number;
}

/**
 * Decodes a uvarint at `buf[pos]` into `out`. Returns false when the input ends
 * early or the value exceeds 2^53 - 1 (callers turn that into a corruption error).
 */
export function readUvarint(buf: Uint8Array, pos: number, end: number, out: VarintCursor): boolean {
  let b = pos < end ? buf[pos]! : -1;
  if (b < 0) return false;
  if (b < 0x80) {
    out.value = b;
    out.pos = pos + 1;
    return true;
  }
  let result = b & 0x7f;
  let mul = 0x80;
  let p = pos + 1;
  for (let i = 1; i < 10; i++) {
    if (p >= end) return false;
    b = buf[p++]!;
    result += (b & 0x7f) * mul;
    if (b < 0x80) {
      if (result > Number.MAX_SAFE_INTEGER) return false;
      out.value = result;
      out.pos = p;
      return true;
    }
    mul *= 0x80;
  }
  return false;
}

/** Reads a little-endian u32. */
export function readU32LE(buf: Uint8Array, pos: number): number {
  return (buf[pos]! | (buf[pos + 1]! << 8) | (buf[pos + 2]! << 16) | (buf[pos + 3]! << 24)) >>> 0;
}
