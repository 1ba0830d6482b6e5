/**
 * Big-endian primitive readers and writers over a Buffer window (realtime.md §2.1).
 * The writer writes into a buffer sized exactly in advance (no growth, no copy);
 * the reader reads in place and returns views for `rest` fields.
 */
import { Buffer } from 'node:buffer';
import { MAX_STRING_BYTES } from './constants.ts';
import { WkprotoDecodeError, WkprotoEncodeError } from './errors.ts';

export const I64_MIN = -(1n << 63n);
export const I64_MAX = (1n << 63n) - 1n;
export const U64_MAX = (1n << 64n) - 1n;

/** Wire size of a string field: 2-byte length + UTF-8 bytes. Throws when too long. */
export function stringFieldSize(value: string, field: string): number {
  const n = Buffer.byteLength(value, 'utf8');
  if (n > MAX_STRING_BYTES) throw new WkprotoEncodeError(`${field}: ${n} UTF-8 bytes exceeds ${MAX_STRING_BYTES}`);
  return 2 + n;
}

/** Eight bytes the 64-bit writes below go through (one JavaScript thread, no re-entry). */
const int64Scratch = new DataView(new ArrayBuffer(8));
const int64Bytes = new Uint8Array(int64Scratch.buffer);

/**
 * Writes the int64 `value` (in range: the caller checked; otherwise its low 64 bits, two's
 * complement) big-endian at `b[at]`; the position after it. Without Buffer#writeBigInt64BE's own
 * checks and dispatch (the server writes a message id into every SENDACK and RECV), and through a
 * DataView rather than BigInt shifts: `>> 32n` and `asIntN`/`asUintN` each make a new BigInt
 * (about 48 ns a call against 10 here).
 */
export function putInt64BE(b: Uint8Array, at: number, value: bigint): number {
  int64Scratch.setBigInt64(0, value);
  const s = int64Bytes;
  b[at] = s[0]!;
  b[at + 1] = s[1]!;
  b[at + 2] = s[2]!;
  b[at + 3] = s[3]!;
  b[at + 4] = s[4]!;
  b[at + 5] = s[5]!;
  b[at + 6] = s[6]!;
  b[at + 7] = s[7]!;
  return at + 8;
}

/**
 * Writes `s` as a WKProto string field (2-byte length, then its bytes) at
 * `b[at]` when every character is ASCII (its UTF-8 is then one byte per
 * character; the caller checked the length): the position after it, or -1
 * at the first other character.
 */
export function putAsciiField(b: Uint8Array, at: number, s: string): number {
  const n = s.length;
  b[at] = n >> 8;
  b[at + 1] = n & 0xff;
  let o = at + 2;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c > 0x7f) return -1;
    b[o++] = c;
  }
  return o;
}

/** Writes `value`, an integer in [0, 2^32) (the caller checked), big-endian at `b[at]`; the position after it. */
export function putUint32BE(b: Uint8Array, at: number, value: number): number {
  b[at] = value >>> 24;
  b[at + 1] = value >>> 16;
  b[at + 2] = value >>> 8;
  b[at + 3] = value;
  return at + 4;
}

/** Writes `value`, an integer in [0, 2^32) (the caller checked), little-endian at `b[at]`; the position after it. */
export function putUint32LE(b: Uint8Array, at: number, value: number): number {
  b[at] = value;
  b[at + 1] = value >>> 8;
  b[at + 2] = value >>> 16;
  b[at + 3] = value >>> 24;
  return at + 4;
}

/** Throws unless `value` is an int64. */
export function checkI64(value: bigint, field: string): void {
  if (value < I64_MIN || value > I64_MAX) throw new WkprotoEncodeError(`${field}: ${value} is not an int64`);
}

/** Throws unless `value` is a uint64. */
export function checkU64(value: bigint, field: string): void {
  if (value < 0n || value > U64_MAX) throw new WkprotoEncodeError(`${field}: ${value} is not a uint64`);
}

/** Throws unless `value` is an integer in [0, max]. */
export function checkInt(value: number, max: number, field: string): void {
  if (!Number.isInteger(value) || value < 0 || value > max) {
    throw new WkprotoEncodeError(`${field}: ${value} is not an integer in [0, ${max}]`);
  }
}

/** Sequential writer into a pre-sized buffer. */
export class ByteWriter {
  pos: number;
  constructor(
    readonly buf: Buffer,
    start = 0,
  ) {
    this.pos = start;
  }

  u8(value: number, field: string): void {
    checkInt(value, 0xff, field);
    this.buf[this.pos++] = value;
  }

  u32(value: number, field: string): void {
    checkInt(value, 0xffff_ffff, field);
    this.buf.writeUInt32BE(value, this.pos);
    this.pos += 4;
  }

  i32(value: number, field: string): void {
    if (!Number.isInteger(value) || value < -0x8000_0000 || value > 0x7fff_ffff) {
      throw new WkprotoEncodeError(`${field}: ${value} is not an int32`);
    }
    this.buf.writeInt32BE(value, this.pos);
    this.pos += 4;
  }

  i64(value: bigint, field: string): void {
    checkI64(value, field);
    this.buf.writeBigInt64BE(value, this.pos);
    this.pos += 8;
  }

  u64(value: bigint, field: string): void {
    checkU64(value, field);
    this.buf.writeBigUInt64BE(value, this.pos);
    this.pos += 8;
  }

  /** Writes a string whose size was already validated by {@link stringFieldSize}. */
  str(value: string): void {
    const n = this.buf.write(value, this.pos + 2, 'utf8');
    this.buf.writeUInt16BE(n, this.pos);
    this.pos += 2 + n;
  }

  bytes(value: Uint8Array): void {
    this.buf.set(value, this.pos);
    this.pos += value.length;
  }
}

/**
 * Node's own UTF-8 decoder behind `Buffer#toString('utf8', start, end)` (a Buffer method
 * Node has always had, undocumented): called directly it skips toString's encoding and
 * range normalization, a few hundred instructions per string (three per SEND). Without
 * it, toString.
 */
const nodeUtf8Slice = (Buffer.prototype as { utf8Slice?: (this: Buffer, start: number, end: number) => string }).utf8Slice;

/** Sequential bounds-checked reader over `buf[pos, end)`. */
export class ByteReader {
  constructor(
    readonly buf: Buffer,
    public pos: number,
    readonly end: number,
  ) {}

  get remaining(): number {
    return this.end - this.pos;
  }

  private need(n: number, what: string): void {
    if (this.end - this.pos < n) {
      throw new WkprotoDecodeError('TRUNCATED', `${what} needs ${n} bytes, ${this.end - this.pos} left in the body`);
    }
  }

  u8(what: string): number {
    this.need(1, what);
    return this.buf[this.pos++] as number;
  }

  u32(what: string): number {
    this.need(4, what);
    const v = this.buf.readUInt32BE(this.pos);
    this.pos += 4;
    return v;
  }

  i32(what: string): number {
    this.need(4, what);
    const v = this.buf.readInt32BE(this.pos);
    this.pos += 4;
    return v;
  }

  i64(what: string): bigint {
    this.need(8, what);
    const v = this.buf.readBigInt64BE(this.pos);
    this.pos += 8;
    return v;
  }

  u64(what: string): bigint {
    this.need(8, what);
    const v = this.buf.readBigUInt64BE(this.pos);
    this.pos += 8;
    return v;
  }

  /** Length is read as a signed int16 (negative ⇒ error), then bounded by the body. */
  str(what: string): string {
    this.need(2, `${what} length`);
    const len = this.buf.readInt16BE(this.pos);
    if (len < 0) throw new WkprotoDecodeError('BAD_STRING_LENGTH', `${what} length ${len} is negative`);
    this.pos += 2;
    if (len === 0) return '';
    if (this.end - this.pos < len) {
      throw new WkprotoDecodeError('BAD_STRING_LENGTH', `${what} length ${len} exceeds the ${this.end - this.pos} bytes left`);
    }
    const s =
      nodeUtf8Slice !== undefined
        ? nodeUtf8Slice.call(this.buf, this.pos, this.pos + len)
        : this.buf.toString('utf8', this.pos, this.pos + len);
    this.pos += len;
    return s;
  }

  /**
   * The rest of the body as a plain `Uint8Array` view (no copy): made by the typed array's own
   * constructor, not `Buffer#subarray` (a JavaScript function of Node's that builds a Buffer
   * through its species look-up, ~700 instructions against ~200).
   */
  restView(): Uint8Array {
    const v = new Uint8Array(this.buf.buffer, this.buf.byteOffset + this.pos, this.end - this.pos);
    this.pos = this.end;
    return v;
  }

  /** The rest of the body as a view (no copy). */
  rest(): Buffer {
    const v = this.buf.subarray(this.pos, this.end);
    this.pos = this.end;
    return v;
  }
}
