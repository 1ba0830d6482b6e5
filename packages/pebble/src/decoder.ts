/**
 * A bounds-checked cursor over a byte range, used to parse MANIFEST edits, WAL
 * batches and block handles. Failures become corruption errors that name the
 * file and the absolute offset (`baseOffset` + position in `buf`).
 */
import { PebbleCorruptionError } from './errors.ts';
import { readUvarint, readU32LE, type VarintCursor } from './varint.ts';

export class Decoder {
  pos: number;
  private readonly cursor: VarintCursor = { value: 0, pos: 0 };

  /**
   * @param buf bytes to parse; @param pos/@param end the range inside `buf`;
   * @param file path used in errors; @param baseOffset file offset of `buf[0]` (or undefined if unknown);
   * @param context extra words for errors, e.g. which record of a log file is being parsed.
   */
  constructor(
    readonly buf: Uint8Array,
    pos: number,
    readonly end: number,
    readonly file: string,
    readonly baseOffset: number | undefined,
    readonly context = '',
  ) {
    this.pos = pos;
  }

  /** True when every byte has been consumed. */
  get done(): boolean {
    return this.pos >= this.end;
  }

  /** Builds a corruption error at the current position. */
  fail(detail: string): PebbleCorruptionError {
    const offset = this.baseOffset === undefined ? undefined : this.baseOffset + this.pos;
    return new PebbleCorruptionError(this.file, offset, this.context ? `${detail} (${this.context})` : detail);
  }

  uvarint(what: string): number {
    if (!readUvarint(this.buf, this.pos, this.end, this.cursor)) throw this.fail(`bad or truncated varint (${what})`);
    this.pos = this.cursor.pos;
    return this.cursor.value;
  }

  u8(what: string): number {
    if (this.pos >= this.end) throw this.fail(`unexpected end of data (${what})`);
    return this.buf[this.pos++]!;
  }

  u32(what: string): number {
    if (this.pos + 4 > this.end) throw this.fail(`unexpected end of data (${what})`);
    const v = readU32LE(this.buf, this.pos);
    this.pos += 4;
    return v;
  }

  /** Raw bytes of length `n` (a view, not a copy). */
  take(n: number, what: string): Uint8Array {
    if (this.pos + n > this.end) throw this.fail(`length ${n} runs past the end (${what})`);
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  /** uvarint length followed by that many bytes. */
  lengthPrefixed(what: string): Uint8Array {
    return this.take(this.uvarint(what), what);
  }
}
