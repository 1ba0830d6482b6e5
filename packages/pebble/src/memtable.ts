/**
 * The memtable rebuilt from the WAL files that the MANIFEST does not cover yet:
 * every batch replayed in file and record order, entries sorted for merging.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeBatch, type BatchEntry, type KindCounts, type Tombstone } from './batch.ts';
import { PebbleCorruptionError } from './errors.ts';
import { compareBytes } from './internal-key.ts';
import { readLogRecords, type LogEnd } from './log-reader.ts';
import type { PointSource } from './point-source.ts';
import { FragmentCursor, fragment, type Fragment } from './tombstones.ts';

// Module-local bindings: hot loops call these per entry, and some TypeScript loaders
// compile imports to property getters that V8 does not always inline.
const localCompareBytes = compareBytes;
const EMPTY = new Uint8Array(0);

/** What was replayed from one WAL file. */
export interface WalInfo {
  name: string;
  size: number;
  batches: number;
  ops: number;
  kinds: KindCounts;
  firstSeq: number | undefined;
  lastSeq: number | undefined;
  /** How the log ended; `torn` only appears with `walTail: 'truncate'`. */
  end: LogEnd;
  tornOffset?: number;
  tornDetail?: string;
}

/** Sorted point entries plus fragmented range deletions of all replayed WALs. */
export interface Memtable {
  entries: BatchEntry[];
  /** 1 where an entry has the same user key as the one before it (an older version). */
  sameAsPrev: Uint8Array;
  fragments: Fragment[];
  tombstones: number;
  wals: WalInfo[];
}

/**
 * Replays `logs` (ascending numbers, already filtered by the MANIFEST's log number).
 * A torn tail in the last WAL is an error unless `truncateLastTail`; in earlier
 * WALs it is always an error unless `strictWalTail` is false (Pebble's rule).
 */
export function replayWals(
  dir: string,
  logs: readonly { num: number; name: string }[],
  truncateLastTail: boolean,
  strictWalTail: boolean,
): Memtable {
  const entries: BatchEntry[] = [];
  const tombstones: Tombstone[] = [];
  const wals: WalInfo[] = [];
  logs.forEach((log, i) => {
    const path = join(dir, log.name);
    const file = readFileSync(path);
    // A plain Uint8Array view: its subarrays (one per key and value) are much cheaper than Buffer slices.
    const buf = new Uint8Array(file.buffer, file.byteOffset, file.length);
    const isLast = i === logs.length - 1;
    const lenient = isLast ? truncateLastTail : !strictWalTail;
    let res;
    try {
      res = readLogRecords(buf, path, log.num, lenient ? 'stop' : 'throw');
    } catch (err) {
      if (err instanceof PebbleCorruptionError && isLast) {
        throw new PebbleCorruptionError(err.file, err.offset, `${err.detail} (a torn tail of the last WAL is what a crash leaves; pass { walTail: 'truncate' } to read up to it as Pebble's recovery does)`);
      }
      throw err;
    }
    const info: WalInfo = { name: log.name, size: buf.length, batches: 0, ops: 0, kinds: {}, firstSeq: undefined, lastSeq: undefined, end: res.end };
    if (res.tornOffset !== undefined) {
      info.tornOffset = res.tornOffset;
      info.tornDetail = res.tornDetail;
    }
    for (const rec of res.records) {
      const { seq, count } = decodeBatch(rec.data, path, rec.offset, entries, tombstones, info.kinds);
      info.batches++;
      info.ops += count;
      if (count > 0) {
        info.firstSeq ??= seq;
        info.lastSeq = seq + count - 1;
      }
    }
    wals.push(info);
  });
  entries.sort((a, b) => localCompareBytes(a.key, b.key) || b.seq - a.seq);
  const sameAsPrev = new Uint8Array(entries.length);
  for (let i = 1; i < entries.length; i++) if (sameKey(entries[i - 1]!.key, entries[i]!.key)) sameAsPrev[i] = 1;
  return { entries, sameAsPrev, fragments: fragment(tombstones), tombstones: tombstones.length, wals };
}

/** Point source over a memtable, optionally starting at a user key. */
export class MemtableIter implements PointSource {
  keyBuf: Uint8Array = EMPTY;
  keyLen = 0;
  valBuf: Uint8Array = EMPTY;
  valOff = 0;
  valLen = 0;
  seq = 0;
  kind = 0;
  sameAsPrev: boolean | undefined = undefined;
  readonly rank = 0;
  readonly hasTombstones: boolean;
  private idx: number;
  private readonly cursor: FragmentCursor;

  constructor(private readonly mem: Memtable, start: Uint8Array | undefined) {
    this.idx = start ? lowerBound(mem.entries, start) - 1 : -1;
    this.cursor = new FragmentCursor(mem.fragments);
    this.hasTombstones = mem.fragments.length > 0;
  }

  next(): boolean {
    const i = ++this.idx;
    const e = this.mem.entries[i];
    if (!e) return false;
    this.keyBuf = e.key;
    this.keyLen = e.key.length;
    this.seq = e.seq;
    this.kind = e.kind;
    this.sameAsPrev = this.mem.sameAsPrev[i] === 1;
    return true;
  }

  loadValue(): void {
    const v = this.mem.entries[this.idx]!.value;
    this.valBuf = v;
    this.valOff = 0;
    this.valLen = v.length;
  }

  /** Newest memtable range deletion covering `key` (-1 if none); keys ascending. */
  tombstoneSeqAt(key: Uint8Array): number {
    return this.cursor.seqAt(key);
  }

  close(): void {}
}

function sameKey(x: Uint8Array, y: Uint8Array): boolean {
  if (x.length !== y.length) return false;
  for (let i = x.length - 1; i >= 0; i--) if (x[i] !== y[i]) return false;
  return true;
}

function lowerBound(entries: BatchEntry[], key: Uint8Array): number {
  let lo = 0;
  let hi = entries.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (localCompareBytes(entries[mid]!.key, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
