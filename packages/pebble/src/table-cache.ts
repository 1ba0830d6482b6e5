/**
 * The sstables of one database, each opened once (footer, metaindex,
 * properties, comparer check, range deletions) and kept open until the
 * database is closed, so that an iteration over a small key range costs no
 * file opens and no metadata decoding. The data-block index is loaded by the
 * table on first use and kept with it.
 */
import { join } from 'node:path';
import { PebbleError, PebbleUnsupportedError } from './errors.ts';
import { isSentinelSeq, Kind } from './internal-key.ts';
import { fileName } from './manifest.ts';
import { Sstable } from './sstable.ts';
import { fragment, type Fragment } from './tombstones.ts';
import type { FileMetadata } from './version-edit.ts';

const BYTEWISE = 'leveldb.BytewiseComparator';

/** An open table with what every iteration needs of it. */
export interface CachedTable {
  table: Sstable;
  /** Exclusive upper bound of the table's keys (from the MANIFEST), see {@link upperExclusive}. */
  upper: Uint8Array;
  /** The table's range deletions, fragmented and clipped to its MANIFEST bounds (shared: read only). */
  tombstones: readonly Fragment[];
}

export class TableCache {
  private readonly tables = new Map<number, CachedTable>();
  /** Tables opened so far (a table is opened once). */
  tablesOpened = 0;
  /** Bytes read by tables already closed. */
  private closedBytes = 0;
  private closed = false;

  /** @param dir the database directory. */
  constructor(private readonly dir: string) {}

  /** The table of `meta`, opened on first use. Throws after {@link close}. */
  get(meta: FileMetadata): CachedTable {
    this.assertOpen();
    const hit = this.tables.get(meta.fileNum);
    if (hit) return hit;
    const table = new Sstable(join(this.dir, `${fileName(meta.fileNum)}.sst`));
    try {
      const cmp = table.properties.comparer;
      if (cmp !== undefined && cmp !== BYTEWISE) {
        throw new PebbleUnsupportedError(`${table.path}: comparer "${cmp}" is not supported (only ${BYTEWISE})`);
      }
      this.tablesOpened++;
      const upper = upperExclusive(meta);
      const tombstones = fragment(table.rangeDeletions(), { lower: meta.smallest.userKey, upperExclusive: upper });
      const entry: CachedTable = { table, upper, tombstones };
      this.tables.set(meta.fileNum, entry);
      return entry;
    } catch (err) {
      this.closedBytes += table.file.bytesRead;
      table.close();
      throw err;
    }
  }

  /**
   * Bytes read from table files so far, each byte once: the sum of every file's
   * own cumulative count (a table shared by several iterations is not counted per iteration).
   */
  bytesRead(): number {
    let n = this.closedBytes;
    for (const t of this.tables.values()) n += t.table.file.bytesRead;
    return n;
  }

  /** Throws a {@link PebbleError} once {@link close} was called. */
  assertOpen(): void {
    if (this.closed) throw new PebbleError(`pebble: database ${this.dir} is closed; open it again to read`);
  }

  /** Closes every table; later {@link get} calls throw (and an iterator still holding a table fails at its next read). */
  close(): void {
    this.closed = true;
    for (const t of this.tables.values()) {
      this.closedBytes += t.table.file.bytesRead;
      t.table.close();
    }
    this.tables.clear();
  }
}

/** Exclusive upper bound of a file's keys: the largest user key, or its immediate successor unless the bound is a range sentinel. */
export function upperExclusive(meta: FileMetadata): Uint8Array {
  const l = meta.largest;
  if (
    isSentinelSeq(l.seq) &&
    (l.kind === Kind.RANGEDEL || l.kind === Kind.RANGEKEYSET || l.kind === Kind.RANGEKEYUNSET || l.kind === Kind.RANGEKEYDEL)
  ) {
    return l.userKey;
  }
  const out = new Uint8Array(l.userKey.length + 1);
  out.set(l.userKey);
  return out;
}
