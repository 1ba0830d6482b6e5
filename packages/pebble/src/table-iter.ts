/**
 * Streaming iterator over the point entries of one sstable, in internal-key
 * order, holding one data block at a time. Verifies key order, key kinds and,
 * after a full scan, the entry and block counts of the properties.
 */
import { BlockIter } from './block-iter.ts';
import type { BlockHandle } from './block.ts';
import { PebbleCorruptionError, PebbleUnsupportedError } from './errors.ts';
import { compareBytes, formatKey, Kind, rangeBefore } from './internal-key.ts';
import { PointCursor, type PointSource } from './point-source.ts';
import type { Sstable } from './sstable.ts';
import { ValueResolver } from './value-blocks.ts';

// Module-local bindings: hot loops call these per entry, and some TypeScript loaders
// compile imports to property getters that V8 does not always inline.
const localCompareBytes = compareBytes;
const localRangeBefore = rangeBefore;

/** 1 for the kinds a data block may hold (DEL, SET, MERGE, SINGLEDEL, SETWITHDEL). */
const POINT_KIND = new Uint8Array(256);
for (const k of [Kind.DEL, Kind.SET, Kind.MERGE, Kind.SINGLEDEL, Kind.SETWITHDEL]) POINT_KIND[k] = 1;
const EMPTY = new Uint8Array(0);

export class TableIter extends PointCursor implements PointSource {
  /** Leading bytes the current user key shares with the previous entry's (0 for a table's first entry). */
  sharedPrefix = 0;
  /** Exact-length views of the scratch key buffer, by length (reset when the buffer is replaced). */
  private views: (Uint8Array | undefined)[] = [];
  private viewsOf: Uint8Array = EMPTY;
  private block: BlockIter | undefined;
  private blockHandle: BlockHandle = { offset: 0, length: 0 };
  private handles: readonly BlockHandle[] = [];
  /** Index of the next data block to read; -1 until the table's block index is loaded (at the first step). */
  private nextBlock = -1;
  private readonly resolver: ValueResolver | undefined;
  private readonly globalSeq: number | undefined;
  private points = 0;
  private prevValid = false;

  /** @param start skip entries whose user key is below it (seek). @param rank tie-break among sources, lower = newer. */
  constructor(
    readonly table: Sstable,
    private readonly start: Uint8Array | undefined,
    readonly rank: number,
  ) {
    super();
    this.resolver = table.format === '(Pebble,v3)' ? new ValueResolver(table) : undefined;
    this.globalSeq = table.globalSeq;
  }

  next(): boolean {
    for (;;) {
      if (this.block && this.block.next()) {
        if (this.decode()) return true;
        continue;
      }
      if (!this.loadBlock()) return false;
    }
  }

  private loadBlock(): boolean {
    if (this.nextBlock < 0) return this.seekBlock();
    const h = this.handles[this.nextBlock];
    if (!h) {
      this.block = undefined;
      this.checkCounts();
      return false;
    }
    this.nextBlock++;
    this.blockHandle = h;
    this.block = new BlockIter(this.table.dataBlock(h), this.table.path, h.offset, true, this.block);
    return true;
  }

  /**
   * Loads the block index and the first block that can hold `start`: the first
   * whose separator is >= it (binary search; separators do not decrease). Inside
   * it, decoding starts at the last restart point below `start`.
   */
  private seekBlock(): boolean {
    const { handles, separators } = this.table.dataBlockIndex();
    this.handles = handles;
    let lo = 0;
    const start = this.start;
    if (start) {
      let hi = handles.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (localCompareBytes(separators[mid]!, start) < 0) lo = mid + 1;
        else hi = mid;
      }
    }
    this.nextBlock = lo;
    if (!this.loadBlock()) return false;
    if (start) this.block!.seekBefore(start);
    return true;
  }

  /** Decodes the block iterator's current entry; false if it is before the seek key. */
  private decode(): boolean {
    const it = this.block!;
    const k = it.key;
    const n = it.keyLen - 8;
    // The trailer, where the block iterator left it (the block, or its scratch key).
    const t = it.trailerBuf;
    const o = it.trailerOff;
    const kind = t[o]!;
    // Sequence number = trailer >> 8, from the 7 high bytes (exact below 2^53).
    const seq =
      this.globalSeq ??
      (t[o + 1]! | (t[o + 2]! << 8) | (t[o + 3]! << 16)) +
        (t[o + 4]! + t[o + 5]! * 0x100 + t[o + 6]! * 0x10000 + t[o + 7]! * 0x1000000) * 0x1000000;
    if (POINT_KIND[kind] !== 1) {
      if (kind === 23 || (kind & 0x40) !== 0)
        throw new PebbleUnsupportedError(`${this.table.path}: key kind ${kind} needs Pebble >= 1.1 (Pebblev4 tables); not supported`);
      throw this.fail(`invalid key kind ${kind} in a data block`);
    }
    this.points++;
    let same: boolean | undefined;
    if (this.prevValid) {
      // The block iterator compared the user key with the previous one before overwriting it.
      const c = it.prevUserCmp;
      if (c > 0 || (c === 0 && (this.seq < seq || (this.seq === seq && this.kind <= kind)))) {
        const prev = c > 0 ? it.prevUserKey! : k.slice(0, n);
        throw this.fail(
          `keys out of order: ${formatKey({ userKey: k.slice(0, n), seq, kind })} after ${formatKey({ userKey: prev, seq: this.seq, kind: this.kind })}`,
        );
      }
      same = c === 0;
    }
    this.sharedPrefix = this.prevValid ? it.userLcp : 0;
    this.sameAsPrev = same;
    this.keyBuf = k;
    this.keyLen = n;
    this.seq = seq;
    this.kind = kind;
    this.prevValid = true;
    return !(this.start && localRangeBefore(k, 0, n, this.start));
  }

  /** View of the current user key; its bytes change when the iterator advances. */
  keyView(): Uint8Array {
    const b = this.keyBuf;
    if (b !== this.viewsOf) {
      this.viewsOf = b;
      this.views = [];
    }
    const len = this.keyLen;
    return (this.views[len] ??= new Uint8Array(b.buffer, b.byteOffset, len));
  }

  /** Copy of the current user key (for tools and tests; the merge reads {@link keyBuf} directly). */
  get userKey(): Uint8Array {
    return this.keyBuf.slice(0, this.keyLen);
  }

  /** View of the current value (stays valid after advancing). */
  value(): Uint8Array {
    const v = this.block!.value();
    if (this.resolver && this.kind === Kind.SET)
      return this.resolver.resolve(v, formatKey({ userKey: this.userKey, seq: this.seq, kind: this.kind }));
    return v;
  }

  loadValue(): void {
    const b = this.block!;
    if (this.resolver && this.kind === Kind.SET) {
      const v = this.value();
      this.valBuf = v;
      this.valOff = 0;
      this.valLen = v.length;
      return;
    }
    this.valBuf = b.block;
    this.valOff = b.valueStart;
    this.valLen = b.valueEnd - b.valueStart;
  }

  private fail(detail: string): PebbleCorruptionError {
    return new PebbleCorruptionError(
      this.table.path,
      this.blockHandle.offset,
      `data block ${this.blockHandle.offset}/${this.blockHandle.length}: ${detail}`,
    );
  }

  /** After a full scan, the properties' counts must match what was read. */
  private checkCounts(): void {
    if (this.start) return;
    const p = this.table.properties;
    const blocks = this.handles.length;
    if (p.numDataBlocks !== undefined && p.numDataBlocks !== blocks) {
      throw new PebbleCorruptionError(this.table.path, undefined, `index lists ${blocks} data blocks, properties say ${p.numDataBlocks}`);
    }
    if (p.numEntries !== undefined) {
      const expected = p.numEntries - (p.numRangeDeletions ?? 0);
      if (expected !== this.points) {
        throw new PebbleCorruptionError(this.table.path, undefined, `read ${this.points} point entries, properties say ${expected}`);
      }
    }
  }

  close(): void {
    this.block = undefined;
  }
}
