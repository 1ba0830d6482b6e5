/**
 * Sequential decoder of a key/value block: entries `shared | unshared | valueLen |
 * keyDelta | value` followed by the restart array. The full key of the current
 * entry lives in a reusable scratch buffer; values are views into the block.
 */
import { Buffer } from 'node:buffer';
import { PebbleCorruptionError } from './errors.ts';
import { readU32LE, readUvarint, type VarintCursor } from './varint.ts';

// Module-local bindings: hot loops call these per entry, and some TypeScript loaders
// compile imports to property getters that V8 does not always inline.
const localReadU32LE = readU32LE;

const EMPTY = new Uint8Array(0);
const seekCursor: VarintCursor = { value: 0, pos: 0 };

export class BlockIter {
  /** Current full key is `key[0, keyLen)`; overwritten by the next call to {@link next}. */
  key: Uint8Array = new Uint8Array(64);
  keyLen = 0;
  /** Current value is `block[valueStart, valueEnd)`. */
  valueStart = 0;
  valueEnd = 0;
  /** Offset of the current entry inside the (decompressed) block. */
  entryOffset = 0;
  /** Bytes the current key shares with the previous one (0 at restarts and the first entry). */
  shared = 0;
  private pos = 0;
  /** End of the entries: the restart array starts here. */
  private readonly limit: number;
  private readonly restarts: number;

  /**
   * @param block decompressed block bytes; @param file path and @param blockOffset
   * (file offset of the block) locate errors.
   */
  /**
   * Only with `userKeyOrder`: the order of the previous entry's user key relative
   * to the current one's (negative, zero or positive, like `compareBytes(prev,
   * cur)`), where a user key is the full key without its last 8 bytes (the
   * internal-key trailer). Computed from the shared prefix before the scratch key
   * is overwritten; 0 means the same user key. After a new block, the previous
   * key is the last key of the iterator given as `prev`.
   */
  prevUserCmp = 0;
  /**
   * Only with `userKeyOrder`: the current key's 8-byte trailer is
   * `trailerBuf[trailerOff, trailerOff + 8)`. In that mode only the user-key part of
   * `key` is kept up to date (the trailer is read where it lies in the block, and
   * copied into `key` only when the next key shares some of it).
   */
  trailerBuf: Uint8Array = EMPTY;
  trailerOff = 0;
  private trailerInKey = false;
  /** Only with `userKeyOrder`: how many leading bytes the current user key shares with the previous one. */
  userLcp = 0;
  /** Only with `userKeyOrder`, when {@link prevUserCmp} > 0: a copy of the previous user key (for error messages). */
  prevUserKey: Uint8Array | undefined;
  /** Length of the key in `key` that the next entry is compared with (the previous block's last key at first). */
  private prevLen = 0;

  constructor(
    readonly block: Uint8Array,
    private readonly file: string,
    private readonly blockOffset: number,
    private readonly userKeyOrder = false,
    prev?: BlockIter,
  ) {
    if (prev) {
      // Take over the previous block's scratch key so the first entry can be compared with its last one.
      this.key = prev.key;
      this.prevLen = prev.keyLen;
    }
    if (block.length < 4) throw this.fail(0, 'block shorter than its restart count');
    const restarts = localReadU32LE(block, block.length - 4);
    const limit = block.length - 4 * (restarts + 1);
    if (restarts === 0 || limit < 0) throw this.fail(0, `invalid restart count ${restarts} for a ${block.length}-byte block`);
    this.limit = limit;
    this.restarts = restarts;
  }

  /**
   * Seek for an iterator that has not started (data blocks, `userKeyOrder`): moves
   * to the last restart point whose user key is below `userKey` (binary search
   * over the restart array), so that decoding skips the entries before it; all of
   * them have smaller user keys. Stays at the block's start when the first restart
   * is not below `userKey` or a restart entry does not decode as one (prefix
   * compression is reset there), leaving errors to the sequential decoding.
   */
  seekBefore(userKey: Uint8Array): void {
    let lo = 0;
    let hi = this.restarts;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const c = this.compareRestart(mid, userKey);
      if (c === undefined) return;
      if (c < 0) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0) this.pos = localReadU32LE(this.block, this.limit + 4 * (lo - 1));
  }

  /** Order of restart point `i`'s user key relative to `userKey` (like compareBytes), or undefined if its entry is malformed. */
  private compareRestart(i: number, userKey: Uint8Array): number | undefined {
    const b = this.block;
    const limit = this.limit;
    const off = localReadU32LE(b, limit + 4 * i);
    const c = seekCursor;
    if (off >= limit || !readUvarint(b, off, limit, c) || c.value !== 0) return undefined;
    if (!readUvarint(b, c.pos, limit, c)) return undefined;
    const klen = c.value;
    if (klen < 8 || !readUvarint(b, c.pos, limit, c) || c.pos + klen > limit) return undefined;
    const p = c.pos;
    const n = klen - 8;
    const m = n < userKey.length ? n : userKey.length;
    for (let j = 0; j < m; j++) {
      const d = b[p + j]! - userKey[j]!;
      if (d !== 0) return d;
    }
    return n - userKey.length;
  }

  private fail(at: number, detail: string): PebbleCorruptionError {
    return new PebbleCorruptionError(this.file, this.blockOffset, `${detail} (block entry at ${at})`);
  }

  /** Advances to the next entry; false at the end of the block. */
  next(): boolean {
    const b = this.block;
    let p = this.pos;
    const limit = this.limit;
    if (p >= limit) return false;
    this.entryOffset = p;
    let shared: number, unshared: number, vlen: number;
    // Fast path: all three varints fit in one byte each (the common case).
    if (p + 3 <= limit && b[p]! < 0x80 && b[p + 1]! < 0x80 && b[p + 2]! < 0x80) {
      shared = b[p]!;
      unshared = b[p + 1]!;
      vlen = b[p + 2]!;
      p += 3;
    } else {
      [shared, p] = this.varint(p);
      [unshared, p] = this.varint(p);
      [vlen, p] = this.varint(p);
    }
    if (shared > this.keyLen) throw this.fail(this.entryOffset, `shared prefix ${shared} longer than the previous key ${this.keyLen}`);
    const vstart = p + unshared;
    const vend = vstart + vlen;
    if (vend > limit) throw this.fail(this.entryOffset, 'entry runs past the end of the block');
    const klen = shared + unshared;
    if (this.userKeyOrder) {
      if (klen < 8) throw this.fail(this.entryOffset, `key of ${klen} bytes is shorter than an internal key`);
      this.compareWithPrev(b, p, shared, klen);
      const prevUser = this.prevLen - 8;
      // The new key reuses bytes of the previous trailer: put that trailer where the shared prefix expects it.
      if (shared > 0 && shared > prevUser && !this.trailerInKey)
        this.key.set(this.trailerBuf.subarray(this.trailerOff, this.trailerOff + 8), prevUser);
    }
    if (klen > this.key.length) {
      const grown = new Uint8Array(Math.max(klen, this.key.length * 2));
      grown.set(this.key.subarray(0, shared));
      this.key = grown;
    }
    const key = this.key;
    // Copy the unshared bytes, without the trailer when it can be read in place.
    const inPlace = this.userKeyOrder && unshared >= 8;
    const copy = inPlace ? unshared - 8 : unshared;
    if (copy <= 32) for (let i = 0; i < copy; i++) key[shared + i] = b[p + i]!;
    else key.set(b.subarray(p, p + copy), shared);
    if (inPlace) {
      this.trailerBuf = b;
      this.trailerOff = vstart - 8;
      this.trailerInKey = false;
    } else if (this.userKeyOrder) {
      this.trailerBuf = key;
      this.trailerOff = klen - 8;
      this.trailerInKey = true;
    }
    this.keyLen = klen;
    this.prevLen = klen;
    this.shared = shared;
    this.valueStart = vstart;
    this.valueEnd = vend;
    this.pos = vend;
    return true;
  }

  /** Sets {@link prevUserCmp} for the entry whose key is `key[0, shared) + b[p, ...)`, `klen` bytes long. */
  private compareWithPrev(b: Uint8Array, p: number, shared: number, klen: number): void {
    const key = this.key;
    const ou = this.prevLen - 8;
    const nu = klen - 8;
    const m = ou < nu ? ou : nu;
    let c = 0;
    let i = shared;
    for (; i < m; i++) {
      const d = key[i]! - b[p + i - shared]!;
      if (d !== 0) {
        c = d;
        break;
      }
    }
    this.userLcp = i < m ? i : m < 0 ? 0 : m;
    if (c === 0) c = ou - nu;
    this.prevUserCmp = c;
    if (c > 0) this.prevUserKey = key.slice(0, ou < 0 ? 0 : ou);
  }

  private varint(p: number): [number, number] {
    const b = this.block;
    let result = 0;
    let mul = 1;
    for (let i = 0; i < 5; i++) {
      if (p >= this.limit) break;
      const byte = b[p++]!;
      result += (byte & 0x7f) * mul;
      if (byte < 0x80) return [result, p];
      mul *= 0x80;
    }
    throw this.fail(this.entryOffset, 'bad varint in block entry');
  }

  /** Copy of the current full key. */
  keyCopy(): Uint8Array {
    return this.key.slice(0, this.keyLen);
  }

  /** View of the current value. */
  value(): Uint8Array {
    return this.block.subarray(this.valueStart, this.valueEnd);
  }
}

/** Decodes every entry of a raw block (metaindex, properties) into name → value views. */
export function readRawBlock(block: Uint8Array, file: string, blockOffset: number): Map<string, Uint8Array> {
  const it = new BlockIter(block, file, blockOffset);
  const out = new Map<string, Uint8Array>();
  while (it.next()) out.set(Buffer.from(it.key.subarray(0, it.keyLen)).toString('latin1'), it.value());
  return out;
}
