/**
 * The merging iterator: k-way merge of the memtable and every level by internal
 * key, resolving each user key to its live value (or nothing) from the newest
 * point entry and the newest covering range deletion.
 */
import { PebbleUnsupportedError } from './errors.ts';
import { Heap } from './heap.ts';
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

function less(a: PointSource, b: PointSource): boolean {
  const c = compareBytes(a.userKey, b.userKey);
  if (c !== 0) return c < 0;
  if (a.seq !== b.seq) return a.seq > b.seq;
  return a.rank < b.rank;
}

/** Yields live entries in key order, below `end` (exclusive) if given. Closes every source when done or abandoned. */
export function* mergeLive(sources: readonly MergeSource[], end: Uint8Array | undefined): Generator<Entry> {
  const heap = new Heap<MergeSource>(less);
  try {
    for (const s of sources) {
      if (s.next()) heap.push(s);
      else s.close();
    }
    for (;;) {
      const top = heap.peek();
      if (!top) return;
      const key = top.userKey;
      if (end && compareBytes(key, end) >= 0) return;
      const seq = top.seq;
      const kind = top.kind;
      let value: Uint8Array | undefined;
      if (kind === Kind.SET || kind === Kind.SETWITHDEL || kind === Kind.MERGE) {
        let tomb = -1;
        for (const s of sources) {
          const t = s.tombstoneSeqAt(key);
          if (t > tomb) tomb = t;
        }
        if (tomb <= seq) {
          if (kind === Kind.MERGE) throw new PebbleUnsupportedError(`MERGE entry ${formatKey(top)} is live; merge operators are not supported`);
          value = top.value();
        }
      }
      advancePast(heap, key);
      if (value) yield { key, value };
    }
  } finally {
    for (const s of sources) s.close();
  }
}

function advancePast(heap: Heap<MergeSource>, key: Uint8Array): void {
  for (;;) {
    const s = heap.peek();
    if (!s || compareBytes(s.userKey, key) !== 0) return;
    if (s.next()) heap.fixTop();
    else {
      heap.pop();
      s.close();
    }
  }
}
