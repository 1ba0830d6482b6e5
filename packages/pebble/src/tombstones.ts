/**
 * Range deletions, fragmented: any set of (possibly overlapping, unsorted)
 * tombstones becomes sorted, disjoint fragments each carrying the highest
 * covering sequence number — all a reader needs to decide whether a point is deleted.
 */
import type { Tombstone } from './batch.ts';
import { Heap } from './heap.ts';
import { compareBytes } from './internal-key.ts';

// Module-local bindings: hot loops call these per entry, and some TypeScript loaders
// compile imports to property getters that V8 does not always inline.
const localCompareBytes = compareBytes;

/** A disjoint piece `[start, end)` whose newest covering tombstone has `seq`. */
export interface Fragment {
  start: Uint8Array;
  end: Uint8Array;
  seq: number;
}

/** Clipping bounds: keys `k` with `lower <= k < upperExclusive` (either side optional). */
export interface Bounds {
  lower?: Uint8Array;
  upperExclusive?: Uint8Array;
}

/** Fragments `tombstones`, clipped to `bounds`. */
export function fragment(tombstones: readonly Tombstone[], bounds: Bounds = {}): Fragment[] {
  const clipped: Tombstone[] = [];
  for (const t of tombstones) {
    const start = bounds.lower && localCompareBytes(t.start, bounds.lower) < 0 ? bounds.lower : t.start;
    const end = bounds.upperExclusive && localCompareBytes(t.end, bounds.upperExclusive) > 0 ? bounds.upperExclusive : t.end;
    if (localCompareBytes(start, end) < 0) clipped.push({ start, end, seq: t.seq });
  }
  if (clipped.length === 0) return [];
  clipped.sort((a, b) => localCompareBytes(a.start, b.start));
  const points = uniqueSorted(clipped.flatMap((t) => [t.start, t.end]));
  const active = new Heap<Tombstone>((a, b) => a.seq > b.seq);
  const out: Fragment[] = [];
  let next = 0;
  for (let i = 0; i + 1 < points.length; i++) {
    const lo = points[i]!;
    const hi = points[i + 1]!;
    while (next < clipped.length && localCompareBytes(clipped[next]!.start, lo) <= 0) active.push(clipped[next++]!);
    while (active.size > 0 && localCompareBytes(active.peek()!.end, lo) <= 0) active.pop();
    const top = active.peek();
    if (!top) continue;
    const last = out.at(-1);
    if (last && last.seq === top.seq && localCompareBytes(last.end, lo) === 0) last.end = hi;
    else out.push({ start: lo, end: hi, seq: top.seq });
  }
  return out;
}

function uniqueSorted(keys: Uint8Array[]): Uint8Array[] {
  keys.sort(compareBytes);
  const out: Uint8Array[] = [];
  for (const k of keys) if (out.length === 0 || localCompareBytes(out.at(-1)!, k) !== 0) out.push(k);
  return out;
}

/** Answers "newest tombstone covering key" for keys visited in ascending order. */
export class FragmentCursor {
  private idx = 0;

  constructor(private readonly frags: readonly Fragment[]) {}

  /** Highest covering tombstone seq for `key`, or -1. Keys must not decrease between calls. */
  seqAt(key: Uint8Array): number {
    const f = this.frags;
    while (this.idx < f.length && localCompareBytes(f[this.idx]!.end, key) <= 0) this.idx++;
    const cur = f[this.idx];
    return cur && localCompareBytes(cur.start, key) <= 0 ? cur.seq : -1;
  }
}
