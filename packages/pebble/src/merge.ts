/**
 * The merging iterator: k-way merge of the memtable and every level by internal
 * key, resolving each user key to its live value (or nothing) from the newest
 * point entry and the newest covering range deletion. The heap is specialised
 * (inline comparison, no closures) because it runs once per entry of the scan.
 */
import { PebbleUnsupportedError } from './errors.ts';
import { compareBytes, formatKey, Kind } from './internal-key.ts';
import type { PointSource } from './point-source.ts';

/** A point source that also knows its range deletions. */
export interface MergeSource extends PointSource {
  tombstoneSeqAt(key: Uint8Array): number;
}

/** One live key/value pair. Both are views the caller may keep. */
export interface Entry {
  key: Uint8Array;
  value: Uint8Array;
}

const SET = Kind.SET;
const SETWITHDEL = Kind.SETWITHDEL;
const MERGE = Kind.MERGE;

/** Internal-key order of two sources' current entries; ties go to the lower rank (newer source). */
function less(a: PointSource, b: PointSource): boolean {
  const x = a.userKey;
  const y = b.userKey;
  if (x !== y) {
    const n = x.length < y.length ? x.length : y.length;
    for (let i = 0; i < n; i++) {
      if (x[i] !== y[i]) return x[i]! < y[i]!;
    }
    if (x.length !== y.length) return x.length < y.length;
  }
  if (a.seq !== b.seq) return a.seq > b.seq;
  return a.rank < b.rank;
}

function sameKey(x: Uint8Array, y: Uint8Array): boolean {
  if (x === y) return true;
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

function siftDown(h: MergeSource[], i: number): void {
  const n = h.length;
  const item = h[i]!;
  for (;;) {
    const l = 2 * i + 1;
    if (l >= n) break;
    const r = l + 1;
    const m = r < n && less(h[r]!, h[l]!) ? r : l;
    if (!less(h[m]!, item)) break;
    h[i] = h[m]!;
    i = m;
  }
  h[i] = item;
}

/**
 * Iterator over live entries in key order, below `end` (exclusive) if given.
 * Closes every source when exhausted, on `return()` (a `break` out of for-of)
 * or when a source throws. A class rather than a generator: resuming a
 * generator per entry costs more than the rest of the merge step.
 */
export class MergeIterator implements IterableIterator<Entry> {
  private readonly heap: MergeSource[] = [];
  private started = false;
  private finished = false;

  constructor(
    private readonly sources: readonly MergeSource[],
    private readonly end: Uint8Array | undefined,
  ) {}

  [Symbol.iterator](): this {
    return this;
  }

  next(): IteratorResult<Entry> {
    if (this.finished) return { done: true, value: undefined };
    try {
      if (!this.started) this.start();
      const e = this.step();
      if (e) return { done: false, value: e };
    } catch (err) {
      this.close();
      throw err;
    }
    this.close();
    return { done: true, value: undefined };
  }

  return(): IteratorResult<Entry> {
    this.close();
    return { done: true, value: undefined };
  }

  private close(): void {
    if (this.finished) return;
    this.finished = true;
    for (const s of this.sources) s.close();
  }

  private start(): void {
    this.started = true;
    const heap = this.heap;
    for (const s of this.sources) {
      if (s.next()) heap.push(s);
      else s.close();
    }
    for (let i = (heap.length >> 1) - 1; i >= 0; i--) siftDown(heap, i);
  }

  /** Resolves user keys until one is live; undefined at the end. */
  private step(): Entry | undefined {
    const heap = this.heap;
    const end = this.end;
    while (heap.length > 0) {
      const top = heap[0]!;
      const key = top.userKey;
      if (end && compareBytes(key, end) >= 0) return undefined;
      const seq = top.seq;
      const kind = top.kind;
      let value: Uint8Array | undefined;
      if (kind === SET || kind === SETWITHDEL || kind === MERGE) {
        let tomb = -1;
        for (const s of this.sources) {
          const t = s.tombstoneSeqAt(key);
          if (t > tomb) tomb = t;
        }
        if (tomb <= seq) {
          if (kind === MERGE) throw new PebbleUnsupportedError(`MERGE entry ${formatKey(top)} is live; merge operators are not supported`);
          value = top.value();
        }
      }
      // Advance every source past `key` (the newest entry and all shadowed ones).
      for (;;) {
        const s = heap[0];
        if (!s || !sameKey(s.userKey, key)) break;
        if (s.next()) siftDown(heap, 0);
        else {
          const last = heap.pop()!;
          if (heap.length > 0) {
            heap[0] = last;
            siftDown(heap, 0);
          }
          s.close();
        }
      }
      if (value) return { key, value };
    }
    return undefined;
  }
}
