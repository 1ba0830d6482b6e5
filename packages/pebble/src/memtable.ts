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
  return { entries, fragments: fragment(tombstones), tombstones: tombstones.length, wals };
}

/** Point source over a memtable, optionally starting at a user key. */
export class MemtableIter implements PointSource {
  userKey: Uint8Array = new Uint8Array(0);
  seq = 0;
  kind = 0;
  readonly rank = 0;
  private idx: number;
  private readonly cursor: FragmentCursor;

  constructor(private readonly mem: Memtable, start: Uint8Array | undefined) {
    this.idx = start ? lowerBound(mem.entries, start) - 1 : -1;
    this.cursor = new FragmentCursor(mem.fragments);
  }

  next(): boolean {
    const e = this.mem.entries[++this.idx];
    if (!e) return false;
    this.userKey = e.key;
    this.seq = e.seq;
    this.kind = e.kind;
    return true;
  }

  value(): Uint8Array {
    return this.mem.entries[this.idx]!.value;
  }

  /** Newest memtable range deletion covering `key` (-1 if none); keys ascending. */
  tombstoneSeqAt(key: Uint8Array): number {
    return this.cursor.seqAt(key);
  }

  close(): void {}
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
