/**
 * Point source over a sequence of non-overlapping sstables (one L1..L6 level, or
 * a single L0 file), reading one table at a time; the tables come open from the
 * database's {@link TableCache} and stay open. It also answers range-deletion
 * queries: each opened table's tombstones, clipped to the table's MANIFEST
 * bounds, stay active until the scan passes the table's largest bound, even after
 * its point entries are exhausted (as Pebble's level iterator does).
 */
import { compareBytes, equalAt } from './internal-key.ts';
import { PointCursor, type PointSource } from './point-source.ts';
import { upperExclusive, type TableCache } from './table-cache.ts';
import { TableIter } from './table-iter.ts';
import { FragmentCursor } from './tombstones.ts';
import type { FileMetadata } from './version-edit.ts';

// Module-local bindings: hot loops call these per entry, and some TypeScript loaders
// compile imports to property getters that V8 does not always inline.
const localCompareBytes = compareBytes;

interface ActiveTombstones {
  upper: Uint8Array;
  cursor: FragmentCursor;
}

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

  /**
   * @param tables the database's open tables; @param files sorted and disjoint;
   * @param start optional seek key; @param rank lower = newer source.
   */
  constructor(
    private readonly tables: TableCache,
    private readonly files: readonly FileMetadata[],
    private readonly start: Uint8Array | undefined,
    readonly rank: number,
  ) {
    super();
    if (start) {
      // First file whose keys can reach `start` (upper bounds ascend: the files are sorted and disjoint).
      let lo = 0;
      let hi = files.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (localCompareBytes(upperExclusive(files[mid]!), start) <= 0) lo = mid + 1;
        else hi = mid;
      }
      this.fileIdx = lo;
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
    const t = this.tables.get(meta);
    if (t.tombstones.length > 0) {
      this.active.push({ upper: t.upper, cursor: new FragmentCursor(t.tombstones) });
      this.hasTombstones = true;
    }
    return new TableIter(t.table, this.start, this.rank);
  }

  /** Leaves the current table (it stays open in the cache). */
  private closeCurrent(): void {
    if (!this.cur) return;
    this.cur.close();
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
