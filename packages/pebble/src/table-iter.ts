/**
 * Streaming iterator over the point entries of one sstable, in internal-key
 * order, holding one data block at a time. Verifies key order, key kinds and,
 * after a full scan, the entry and block counts of the properties.
 */
import { BlockIter } from './block-iter.ts';
import { readBlock, type BlockHandle } from './block.ts';
import { PebbleCorruptionError, PebbleUnsupportedError } from './errors.ts';
import { compareBytes, compareFrom, formatKey, Kind } from './internal-key.ts';
import type { PointSource } from './point-source.ts';
import type { Sstable } from './sstable.ts';
import { ValueResolver } from './value-blocks.ts';

// Module-local bindings: hot loops call these per entry, and some TypeScript loaders
// compile imports to property getters that V8 does not always inline.
const localCompareBytes = compareBytes;
const localCompareFrom = compareFrom;

/** 1 for the kinds a data block may hold (DEL, SET, MERGE, SINGLEDEL, SETWITHDEL). */
const POINT_KIND = new Uint8Array(256);
for (const k of [Kind.DEL, Kind.SET, Kind.MERGE, Kind.SINGLEDEL, Kind.SETWITHDEL]) POINT_KIND[k] = 1;
const EMPTY = new Uint8Array(0);

export class TableIter implements PointSource {
  userKey: Uint8Array = EMPTY;
  seq = 0;
  kind = 0;
  private block: BlockIter | undefined;
  private blockHandle: BlockHandle = { offset: 0, length: 0 };
  private readonly handles: Generator<{ handle: BlockHandle; separator: Uint8Array }>;
  private readonly resolver: ValueResolver | undefined;
  private readonly globalSeq: number | undefined;
  private points = 0;
  private blocks = 0;
  private prevValid = false;
  private newBlock = true;

  /** @param start skip entries whose user key is below it (seek). @param rank tie-break among sources, lower = newer. */
  constructor(
    readonly table: Sstable,
    private readonly start: Uint8Array | undefined,
    readonly rank: number,
  ) {
    this.handles = table.dataBlockHandles();
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
    for (;;) {
      const n = this.handles.next();
      if (n.done) {
        this.block = undefined;
        this.checkCounts();
        return false;
      }
      this.blocks++;
      if (this.start && localCompareBytes(n.value.separator, this.start) < 0) continue;
      this.blockHandle = n.value.handle;
      this.newBlock = true;
      this.block = new BlockIter(readBlock(this.table.file, n.value.handle, 'data'), this.table.path, n.value.handle.offset);
      return true;
    }
  }

  /** Decodes the block iterator's current entry; false if it is before the seek key. */
  private decode(): boolean {
    const it = this.block!;
    const n = it.keyLen - 8;
    if (n < 0) throw this.fail(`key of ${it.keyLen} bytes is shorter than an internal key`);
    const kind = it.key[n]!;
    const k = it.key;
    // Sequence number = trailer >> 8, from the 7 high bytes (exact below 2^53).
    const seq =
      this.globalSeq ??
      (k[n + 1]! | (k[n + 2]! << 8) | (k[n + 3]! << 16)) +
        (k[n + 4]! + k[n + 5]! * 0x100 + k[n + 6]! * 0x10000 + k[n + 7]! * 0x1000000) * 0x1000000;
    if (POINT_KIND[kind] !== 1) {
      if (kind === 23 || (kind & 0x40) !== 0) throw new PebbleUnsupportedError(`${this.table.path}: key kind ${kind} needs Pebble >= 1.1 (Pebblev4 tables); not supported`);
      throw this.fail(`invalid key kind ${kind} in a data block`);
    }
    this.points++;
    const userKey = it.key.slice(0, n);
    if (this.prevValid) {
      const c = localCompareFrom(this.userKey, userKey, this.sharedWithPrev(it.shared));
      if (c > 0 || (c === 0 && (this.seq < seq || (this.seq === seq && this.kind <= kind)))) {
        throw this.fail(`keys out of order: ${formatKey({ userKey, seq, kind })} after ${formatKey(this)}`);
      }
    }
    this.userKey = userKey;
    this.seq = seq;
    this.kind = kind;
    this.prevValid = true;
    return !(this.start && localCompareBytes(userKey, this.start) < 0);
  }

  /** Length of the user-key prefix known equal to the previous entry's: the block's shared bytes, unless a new block began. */
  private sharedWithPrev(shared: number): number {
    if (this.newBlock) {
      this.newBlock = false;
      return 0;
    }
    return shared;
  }

  value(): Uint8Array {
    const v = this.block!.value();
    if (this.resolver && this.kind === Kind.SET) return this.resolver.resolve(v, formatKey(this));
    return v;
  }

  private fail(detail: string): PebbleCorruptionError {
    return new PebbleCorruptionError(this.table.path, this.blockHandle.offset, `data block ${this.blockHandle.offset}/${this.blockHandle.length}: ${detail}`);
  }

  /** After a full scan, the properties' counts must match what was read. */
  private checkCounts(): void {
    if (this.start) return;
    const p = this.table.properties;
    if (p.numDataBlocks !== undefined && p.numDataBlocks !== this.blocks) {
      throw new PebbleCorruptionError(this.table.path, undefined, `index lists ${this.blocks} data blocks, properties say ${p.numDataBlocks}`);
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
