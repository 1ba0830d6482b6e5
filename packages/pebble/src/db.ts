/**
 * `openPebble`: the read-only database handle. Opening reads the directory
 * listing, the MANIFEST, the OPTIONS file and the unflushed WALs (the memtable),
 * and checks that every live sstable exists with the recorded size. Tables are
 * opened when an iteration first reaches them and then kept open (with their
 * metadata and block index) for every later iteration, until `close()`.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { discover, type Discovery } from './discovery.ts';
import { PebbleCorruptionError, PebbleUnsupportedError } from './errors.ts';
import { compareBytes } from './internal-key.ts';
import { LevelIter } from './level-iter.ts';
import { fileName, readManifest, type ManifestState } from './manifest.ts';
import { MemtableIter, replayWals, type Memtable, type WalInfo } from './memtable.ts';
import { MergeIterator, type Entry, type MergeSource } from './merge.ts';
import { TableCache } from './table-cache.ts';

/** Options of {@link openPebble}. */
export interface OpenOptions {
  /**
   * What to do when the last WAL ends in a torn chunk (a crash mid-write):
   * 'error' (default) refuses, 'truncate' keeps the batches before it, as Pebble's recovery does.
   */
  walTail?: 'error' | 'truncate';
}

/** Key range of an iteration: `start` inclusive, `end` exclusive, both optional. */
export interface KeyRange {
  start?: Uint8Array;
  end?: Uint8Array;
}

/** Facts about the opened database and the most recent scans. */
export interface PebbleStats {
  dir: string;
  formatMajorVersion: number;
  manifest: string;
  comparer: string | undefined;
  lastSeq: number;
  minUnflushedLogNum: number;
  /** Live sstables per level 0..6 (number and byte size). */
  levels: { level: number; files: { fileNum: number; size: number }[] }[];
  tableBytes: number;
  wals: WalInfo[];
  memtableEntries: number;
  memtableRangeDeletions: number;
  /**
   * Cumulative over every iteration so far: `tablesOpened` counts real opens
   * (a table is opened once per database, then shared by all iterations),
   * `bytesRead` every byte read from table files once.
   */
  scans: { iterations: number; tablesOpened: number; bytesRead: number };
}

/** A read-only Pebble v1 database. */
export interface PebbleDb {
  readonly formatMajorVersion: number;
  /**
   * Live key/value pairs in bytewise key order; streams (one block per table being
   * read). Tables stay open between calls, so iterating over many small ranges is
   * cheap. The yielded entry object and the bytes behind its `key` and `value` are
   * reused: they are valid only until the iterator advances. Copy what you keep.
   * Throws once the database is closed.
   */
  iterate(range?: KeyRange): IterableIterator<Entry>;
  /** Live value of `key` (a copy the caller owns), or undefined. */
  get(key: Uint8Array): Uint8Array | undefined;
  stats(): PebbleStats;
  /**
   * Closes every sstable the database holds open. Afterwards `iterate` and `get`
   * throw, and an iterator still running fails at its next table read. Idempotent.
   */
  close(): void;
}

const BYTEWISE = 'leveldb.BytewiseComparator';

/** Opens the Pebble database in `dir` for reading. Never writes, locks or renames anything there. */
export function openPebble(dir: string, options: OpenOptions = {}): PebbleDb {
  const disc = discover(dir);
  const manifestPath = join(dir, disc.manifestName);
  const manifest = readManifest(manifestPath);
  if (manifest.comparer !== undefined && manifest.comparer !== BYTEWISE) {
    throw new PebbleUnsupportedError(`pebble: ${manifestPath} uses comparer "${manifest.comparer}"; only ${BYTEWISE} is supported`);
  }
  checkTables(disc, manifest);
  const strict = (disc.options.get('Options.strict_wal_tail') ?? 'true') !== 'false';
  const logs = disc.logs.filter((l) => l.num >= manifest.logNum);
  const memtable = replayWals(dir, logs, options.walTail === 'truncate', strict);
  return new Db(disc, manifest, memtable);
}

function checkTables(disc: Discovery, manifest: ManifestState): void {
  manifest.levels.forEach((files, level) => {
    for (const f of files) {
      const path = join(disc.dir, `${fileName(f.fileNum)}.sst`);
      let size: number;
      try {
        size = statSync(path).size;
      } catch {
        throw new PebbleCorruptionError(path, undefined, `sstable of L${level} listed in ${disc.manifestName} is missing`);
      }
      if (size !== f.size) {
        throw new PebbleCorruptionError(path, undefined, `size is ${size} bytes, ${disc.manifestName} records ${f.size}`);
      }
    }
  });
}

class Db implements PebbleDb {
  readonly formatMajorVersion: number;
  private readonly tables: TableCache;
  private iterations = 0;

  constructor(
    private readonly disc: Discovery,
    private readonly manifest: ManifestState,
    private readonly memtable: Memtable,
  ) {
    this.formatMajorVersion = disc.formatMajorVersion;
    this.tables = new TableCache(disc.dir);
  }

  iterate(range: KeyRange = {}): IterableIterator<Entry> {
    this.tables.assertOpen();
    this.iterations++;
    const { start, end } = range;
    const sources: MergeSource[] = [new MemtableIter(this.memtable, start)];
    let rank = 1;
    const [l0, ...deeper] = this.manifest.levels;
    for (const f of l0 ?? []) sources.push(new LevelIter(this.tables, [f], start, rank++));
    for (const files of deeper) if (files.length > 0) sources.push(new LevelIter(this.tables, files, start, rank++));
    return new MergeIterator(sources, end);
  }

  get(key: Uint8Array): Uint8Array | undefined {
    const end = new Uint8Array(key.length + 1);
    end.set(key);
    for (const e of this.iterate({ start: key, end })) {
      if (compareBytes(e.key, key) === 0) return e.value.slice();
    }
    return undefined;
  }

  stats(): PebbleStats {
    const m = this.manifest;
    const levels = m.levels.map((files, level) => ({ level, files: files.map((f) => ({ fileNum: f.fileNum, size: f.size })) }));
    return {
      dir: this.disc.dir,
      formatMajorVersion: this.formatMajorVersion,
      manifest: this.disc.manifestName,
      comparer: m.comparer,
      lastSeq: m.lastSeq,
      minUnflushedLogNum: m.logNum,
      levels,
      tableBytes: levels.reduce((n, l) => n + l.files.reduce((s, f) => s + f.size, 0), 0),
      wals: this.memtable.wals,
      memtableEntries: this.memtable.points.count,
      memtableRangeDeletions: this.memtable.tombstones,
      scans: { iterations: this.iterations, tablesOpened: this.tables.tablesOpened, bytesRead: this.tables.bytesRead() },
    };
  }

  close(): void {
    this.tables.close();
  }
}
