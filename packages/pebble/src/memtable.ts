/**
 * The memtable rebuilt from the WAL files that the MANIFEST does not cover yet:
 * every batch replayed in file and record order, entries sorted for merging.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeBatch, PointTable, type KindCounts, type Tombstone } from './batch.ts';
import { PebbleCorruptionError, PebbleUnsupportedError } from './errors.ts';
import { equalAt, rangeBefore } from './internal-key.ts';
import { sortEntries } from './key-sort.ts';

// Module-local binding for a per-entry loop (some TypeScript loaders compile imports to property getters).
const localEqualAt = equalAt;
import { readLogRecords, type LogEnd, type LogRecord } from './log-reader.ts';
import { PointCursor, type PointSource } from './point-source.ts';
import { FragmentCursor, fragment, type Fragment } from './tombstones.ts';

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
  /** Every point operation, in WAL order; keys and values are ranges of one arena holding all replayed batches. */
  points: PointTable;
  /** Indices into {@link points} in internal-key order (user key ascending, sequence number descending). */
  order: Int32Array;
  /** `sameAsPrev[i]` is 1 where the entry at `order[i]` has the same user key as the one before it (an older version). */
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
  const tombstones: Tombstone[] = [];
  const wals: WalInfo[] = [];
  const read: { path: string; records: LogRecord[]; info: WalInfo }[] = [];
  let total = 0;
  logs.forEach((log, i) => {
    const path = join(dir, log.name);
    const file = readFileSync(path);
    const buf = new Uint8Array(file.buffer, file.byteOffset, file.length);
    const isLast = i === logs.length - 1;
    const lenient = isLast ? truncateLastTail : !strictWalTail;
    let res;
    try {
      res = readLogRecords(buf, path, log.num, lenient ? 'stop' : 'throw');
    } catch (err) {
      if (err instanceof PebbleCorruptionError && isLast) {
        throw new PebbleCorruptionError(
          err.file,
          err.offset,
          `${err.detail} (a torn tail of the last WAL is what a crash leaves; pass { walTail: 'truncate' } to read up to it as Pebble's recovery does)`,
        );
      }
      throw err;
    }
    const info: WalInfo = {
      name: log.name,
      size: buf.length,
      batches: 0,
      ops: 0,
      kinds: {},
      firstSeq: undefined,
      lastSeq: undefined,
      end: res.end,
    };
    if (res.tornOffset !== undefined) {
      info.tornOffset = res.tornOffset;
      info.tornDetail = res.tornDetail;
    }
    for (const rec of res.records) total += rec.data.length;
    read.push({ path, records: res.records, info });
  });
  if (total > 0x7fffffff) throw new PebbleUnsupportedError(`${dir}: ${total} bytes of unflushed WAL batches; at most 2 GiB are supported`);
  // Every batch is copied into one arena, so that each key and value is an offset pair instead of an object.
  const arena = new Uint8Array(total);
  const points = new PointTable(arena, Math.max(256, total >> 5));
  let at = 0;
  for (const { path, records, info } of read) {
    for (const rec of records) {
      const start = at;
      arena.set(rec.data, start);
      at += rec.data.length;
      const { seq, count } = decodeBatch(start, at, path, rec.offset, points, tombstones, info.kinds);
      info.batches++;
      info.ops += count;
      if (count > 0) {
        info.firstSeq ??= seq;
        info.lastSeq = seq + count - 1;
      }
    }
    wals.push(info);
  }
  const order = sortEntries({ arena, keyOff: points.keyOff, keyLen: points.keyLen, seq: points.seq, count: points.count });
  const sameAsPrev = new Uint8Array(order.length);
  for (let i = 1; i < order.length; i++) if (sameKey(points, order[i - 1]!, order[i]!)) sameAsPrev[i] = 1;
  return { points, order, sameAsPrev, fragments: fragment(tombstones), tombstones: tombstones.length, wals };
}

/** Point source over a memtable, optionally starting at a user key. */
export class MemtableIter extends PointCursor implements PointSource {
  readonly rank = 0;
  readonly hasTombstones: boolean;
  private idx: number;
  private cur = 0;
  private readonly points: PointTable;
  private readonly order: Int32Array;
  private readonly cursor: FragmentCursor;

  constructor(
    private readonly mem: Memtable,
    start: Uint8Array | undefined,
  ) {
    super();
    this.points = mem.points;
    this.order = mem.order;
    this.keyBuf = mem.points.arena;
    this.valBuf = mem.points.arena;
    this.idx = start ? lowerBound(mem, start) - 1 : -1;
    this.cursor = new FragmentCursor(mem.fragments);
    this.hasTombstones = mem.fragments.length > 0;
  }

  next(): boolean {
    const i = ++this.idx;
    if (i >= this.order.length) return false;
    const e = this.order[i]!;
    const p = this.points;
    this.cur = e;
    this.keyOff = p.keyOff[e]!;
    this.keyLen = p.keyLen[e]!;
    this.seq = p.seq[e]!;
    this.kind = p.kind[e]!;
    this.sameAsPrev = this.mem.sameAsPrev[i] === 1;
    return true;
  }

  /** Keys are ranges of the arena: the merge copies them (no per-entry views). */
  keyView(): undefined {
    return undefined;
  }

  loadValue(): void {
    const p = this.points;
    this.valOff = p.valOff[this.cur]!;
    this.valLen = p.valLen[this.cur]!;
  }

  /** Newest memtable range deletion covering `key` (-1 if none); keys ascending. */
  tombstoneSeqAt(key: Uint8Array): number {
    return this.cursor.seqAt(key);
  }

  close(): void {}
}

/** True when entries `a` and `b` of `p` have the same key. */
function sameKey(p: PointTable, a: number, b: number): boolean {
  const n = p.keyLen[a]!;
  return n === p.keyLen[b]! && localEqualAt(p.arena, p.keyOff[a]!, p.arena, p.keyOff[b]!, n);
}

/** Position in `mem.order` of the first entry whose key is >= `key`. */
function lowerBound(mem: Memtable, key: Uint8Array): number {
  const { arena, keyOff, keyLen } = mem.points;
  let lo = 0;
  let hi = mem.order.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const e = mem.order[mid]!;
    if (rangeBefore(arena, keyOff[e]!, keyLen[e]!, key)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
