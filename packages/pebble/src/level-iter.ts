/**
 * Point source over a sequence of non-overlapping sstables (one L1..L6 level, or
 * a single L0 file), opening one table at a time. It also answers range-deletion
 * queries: each opened table's tombstones, clipped to the table's MANIFEST
 * bounds, stay active until the scan passes the table's largest bound, even after
 * its point entries are exhausted (as Pebble's level iterator does).
 */
import { join } from 'node:path';
import { PebbleUnsupportedError } from './errors.ts';
import { compareBytes, equalAt, isSentinelSeq, Kind } from './internal-key.ts';
import { fileName } from './manifest.ts';
import { PointCursor, type PointSource } from './point-source.ts';
import { Sstable } from './sstable.ts';
import { TableIter } from './table-iter.ts';
import { FragmentCursor, fragment, type Bounds } from './tombstones.ts';
import type { FileMetadata } from './version-edit.ts';

// Module-local bindings: hot loops call these per entry, and some TypeScript loaders
// compile imports to property getters that V8 does not always inline.
const localCompareBytes = compareBytes;

/** Scan counters shared by all tables of one iteration. */
export interface ScanCounters {
  tablesOpened: number;
  bytesRead: number;
}

interface ActiveTombstones {
  upper: Uint8Array;
  cursor: FragmentCursor;
}

const BYTEWISE = 'leveldb.BytewiseComparator';

export class LevelIter extends PointCursor implements PointSource {
  sharedPrefix = 0;
  /** The last user key of the previous table (to tell whether the next table starts with the same key). */
  private lastKey: Uint8Array | undefined;
  /** Whether the current table has yielded an entry. */
  private curYielded = false;
  /** False while no opened table's range deletions are active. */
  hasTombstones = false;
  private fileIdx = 0;
  private cur: TableIter | undefined;
  private readonly active: ActiveTombstones[] = [];

  /** @param files sorted and disjoint; @param start optional seek key; @param rank lower = newer source. */
  constructor(
    private readonly dir: string,
    private readonly files: readonly FileMetadata[],
    private readonly start: Uint8Array | undefined,
    readonly rank: number,
    private readonly counters: ScanCounters,
  ) {
    super();
    if (start) {
      while (this.fileIdx < files.length && localCompareBytes(upperExclusive(files[this.fileIdx]!), start) <= 0) this.fileIdx++;
    }
  }

  next(): boolean {
    for (;;) {
      if (this.cur) {
        const cur = this.cur;
        if (cur.next()) {
          this.keyBuf = cur.keyBuf;
          this.keyLen = cur.keyLen;
          this.seq = cur.seq;
          this.kind = cur.kind;
          let same = cur.sameAsPrev;
          if (same === undefined && this.lastKey !== undefined) {
            // First entry of a table after another one: compare with that table's last key.
            same = this.lastKey.length === cur.keyLen && equalAt(this.lastKey, 0, cur.keyBuf, 0, cur.keyLen);
            this.lastKey = undefined;
          }
          this.sameAsPrev = same;
          this.sharedPrefix = cur.sharedPrefix;
          this.curYielded = true;
          return true;
        }
        // The exhausted table's scratch key still holds its last key.
        if (this.curYielded) this.lastKey = cur.keyBuf.slice(0, cur.keyLen);
        this.closeCurrent();
      }
      const meta = this.files[this.fileIdx++];
      if (!meta) return false;
      this.cur = this.openTable(meta);
      this.curYielded = false;
    }
  }

  private openTable(meta: FileMetadata): TableIter {
    const table = new Sstable(join(this.dir, `${fileName(meta.fileNum)}.sst`));
    try {
      const cmp = table.properties.comparer;
      if (cmp !== undefined && cmp !== BYTEWISE) {
        throw new PebbleUnsupportedError(`${table.path}: comparer "${cmp}" is not supported (only ${BYTEWISE})`);
      }
      this.counters.tablesOpened++;
      const bounds: Bounds = { lower: meta.smallest.userKey, upperExclusive: upperExclusive(meta) };
      const frags = fragment(table.rangeDeletions(), bounds);
      if (frags.length > 0) {
        this.active.push({ upper: bounds.upperExclusive!, cursor: new FragmentCursor(frags) });
        this.hasTombstones = true;
      }
      return new TableIter(table, this.start, this.rank);
    } catch (err) {
      table.close();
      throw err;
    }
  }

  private closeCurrent(): void {
    if (!this.cur) return;
    this.counters.bytesRead += this.cur.table.file.bytesRead;
    this.cur.table.close();
    this.cur = undefined;
  }

  keyView(): Uint8Array | undefined {
    return this.cur?.keyView();
  }

  loadValue(): void {
    const cur = this.cur!;
    cur.loadValue();
    this.valBuf = cur.valBuf;
    this.valOff = cur.valOff;
    this.valLen = cur.valLen;
  }

  /** Newest tombstone of this level covering `key`, or -1. Keys must be visited in ascending order. */
  tombstoneSeqAt(key: Uint8Array): number {
    if (this.active.length === 0) return -1;
    while (this.active.length > 0 && localCompareBytes(this.active[0]!.upper, key) <= 0) this.active.shift();
    this.hasTombstones = this.active.length > 0;
    let best = -1;
    for (const a of this.active) {
      const s = a.cursor.seqAt(key);
      if (s > best) best = s;
    }
    return best;
  }

  close(): void {
    this.closeCurrent();
    this.fileIdx = this.files.length;
  }
}

/** Exclusive upper bound of a file's keys: the largest user key, or its immediate successor unless the bound is a range sentinel. */
export function upperExclusive(meta: FileMetadata): Uint8Array {
  const l = meta.largest;
  if (isSentinelSeq(l.seq) && (l.kind === Kind.RANGEDEL || l.kind === Kind.RANGEKEYSET || l.kind === Kind.RANGEKEYUNSET || l.kind === Kind.RANGEKEYDEL)) {
    return l.userKey;
  }
  const out = new Uint8Array(l.userKey.length + 1);
  out.set(l.userKey);
  return out;
}
