/**
 * Sorting the WAL memtable: entries whose keys are byte ranges of one arena,
 * into internal-key order (user key ascending bytewise, sequence number
 * descending). A most-significant-byte radix sort: a counting pass per key
 * byte splits a range into buckets, so sorting costs about one pass over the
 * key bytes instead of n·log n calls of a comparison function (which, on
 * WuKongIM keys sharing 10-20 leading bytes, was the dominant cost of opening
 * a database). Small buckets fall back to an insertion sort.
 */

/** The entries to sort: entry `i` has user key `arena[keyOff[i], keyOff[i] + keyLen[i])` and sequence number `seq[i]`. */
export interface SortInput {
  arena: Uint8Array;
  keyOff: Int32Array;
  keyLen: Int32Array;
  seq: Float64Array;
  count: number;
}

/** Buckets at or below this size are finished with an insertion sort. */
const SMALL_BUCKET = 24;
/** Bucket 0: the key ended at this depth (sorts first); bucket b + 1: byte b. */
const BUCKETS = 257;

/**
 * Returns the entry indices `0..count-1` in internal-key order. Stable for
 * entries with equal keys and equal sequence numbers (which a valid WAL never has).
 */
export function sortEntries(input: SortInput): Int32Array {
  const n = input.count;
  const order = new Int32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  if (n > 1) new KeySorter(input, order).sortAll();
  return order;
}

class KeySorter {
  private readonly arena: Uint8Array;
  private readonly keyOff: Int32Array;
  private readonly keyLen: Int32Array;
  private readonly seq: Float64Array;
  private readonly tmp: Int32Array;
  private readonly counts = new Int32Array(BUCKETS);
  /**
   * Ranges still to sort, as (lo, hi, depth) triples: an explicit stack instead of
   * recursion, so that keys nested in each other ("a", "aa", "aaa", …) cannot
   * overflow the call stack. Pending ranges are disjoint, so it holds at most n/2.
   */
  private readonly pending: number[] = [];

  constructor(
    input: SortInput,
    private readonly order: Int32Array,
  ) {
    this.arena = input.arena;
    this.keyOff = input.keyOff;
    this.keyLen = input.keyLen;
    this.seq = input.seq;
    this.tmp = new Int32Array(order.length);
  }

  sortAll(): void {
    const p = this.pending;
    p.push(0, this.order.length, 0);
    while (p.length > 0) {
      const depth = p.pop()!;
      const hi = p.pop()!;
      const lo = p.pop()!;
      this.sortRange(lo, hi, depth);
    }
  }

  /** Sorts `order[lo, hi)`, whose keys all share their first `depth` bytes, or splits it into pending ranges. */
  private sortRange(lo: number, hi: number, depth: number): void {
    const { arena, keyOff, keyLen, order } = this;
    if (hi - lo <= SMALL_BUCKET) {
      this.insertionSort(lo, hi, depth);
      return;
    }
    // Skip the bytes every key of the range shares (WuKongIM keys share table ids, channel hashes, high sequence
    // bytes), a byte position at a time, so a range costs (bytes skipped + 1) x its size even for nested keys.
    const first = order[lo]!;
    const fo = keyOff[first]!;
    const fl = keyLen[first]!;
    let d = depth;
    skip: for (; d < fl; d++) {
      const b = arena[fo + d];
      for (let i = lo + 1; i < hi; i++) {
        const x = order[i]!;
        if (d >= keyLen[x]! || arena[keyOff[x]! + d] !== b) break skip;
      }
    }
    // Counting pass on byte d; bucket 0 holds keys that end at d.
    const c = this.counts.fill(0);
    let minB = BUCKETS;
    let maxB = 0;
    for (let i = lo; i < hi; i++) {
      const x = order[i]!;
      const b = d < keyLen[x]! ? arena[keyOff[x]! + d]! + 1 : 0;
      c[b]!++;
      if (b < minB) minB = b;
      if (b > maxB) maxB = b;
    }
    if (minB === maxB) {
      // Only possible when every key ends at d (otherwise d would have been skipped): equal keys.
      this.insertionSort(lo, hi, d);
      return;
    }
    // Bucket starts, then a stable scatter through tmp.
    let acc = lo;
    for (let k = minB; k <= maxB; k++) {
      const m = c[k]!;
      c[k] = acc;
      acc += m;
    }
    const tmp = this.tmp;
    for (let i = lo; i < hi; i++) {
      const x = order[i]!;
      tmp[c[d < keyLen[x]! ? arena[keyOff[x]! + d]! + 1 : 0]!++] = x;
    }
    order.set(tmp.subarray(lo, hi), lo);
    // After the scatter, c[k] is the end of bucket k (= start of the next non-empty one).
    let start = lo;
    for (let k = minB; k <= maxB; k++) {
      const end = c[k]!;
      if (end - start > 1) {
        if (k === 0) this.insertionSort(start, end, d);
        else this.pending.push(start, end, d + 1);
      }
      start = end;
    }
  }

  /** Insertion sort of `order[lo, hi)` by key bytes from `depth` on, then sequence number descending. */
  private insertionSort(lo: number, hi: number, depth: number): void {
    const order = this.order;
    for (let i = lo + 1; i < hi; i++) {
      const v = order[i]!;
      let j = i - 1;
      while (j >= lo && this.after(order[j]!, v, depth)) {
        order[j + 1] = order[j]!;
        j--;
      }
      order[j + 1] = v;
    }
  }

  /** True when entry `a` sorts strictly after entry `b` (keys equal before `depth`). */
  private after(a: number, b: number, depth: number): boolean {
    const arena = this.arena;
    const la = this.keyLen[a]!;
    const lb = this.keyLen[b]!;
    const oa = this.keyOff[a]!;
    const ob = this.keyOff[b]!;
    const m = la < lb ? la : lb;
    for (let i = depth; i < m; i++) {
      const d = arena[oa + i]! - arena[ob + i]!;
      if (d !== 0) return d > 0;
    }
    if (la !== lb) return la > lb;
    return this.seq[a]! < this.seq[b]!;
  }
}
