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

/** Yields live entries in key order, below `end` (exclusive) if given. Closes every source when done or abandoned. */
export function* mergeLive(sources: readonly MergeSource[], end: Uint8Array | undefined): Generator<Entry> {
  const heap: MergeSource[] = [];
  try {
    for (const s of sources) {
      if (s.next()) heap.push(s);
      else s.close();
    }
    for (let i = (heap.length >> 1) - 1; i >= 0; i--) siftDown(heap, i);
    while (heap.length > 0) {
      const top = heap[0]!;
      const key = top.userKey;
      if (end && compareBytes(key, end) >= 0) return;
      const seq = top.seq;
      const kind = top.kind;
      let value: Uint8Array | undefined;
      if (kind === SET || kind === SETWITHDEL || kind === MERGE) {
        let tomb = -1;
        for (const s of sources) {
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
      if (value) yield { key, value };
    }
  } finally {
    for (const s of sources) s.close();
  }
}
