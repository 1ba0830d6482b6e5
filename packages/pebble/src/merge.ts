/**
 * The merging iterator: k-way merge of the memtable and every level by internal
 * key, resolving each user key to its live value (or nothing) from the newest
 * point entry and the newest covering range deletion. The heap is specialised
 * (inline comparison, no closures) and the step allocates nothing, because it
 * runs once per entry of the scan.
 */
import { PebbleUnsupportedError } from './errors.ts';
import { equalAt, formatKey, Kind, rangeBefore } from './internal-key.ts';
import type { PointSource } from './point-source.ts';

// Module-local bindings: the merge calls these per entry, and some TypeScript loaders
// compile imports to property getters that V8 does not always inline.
const localEqualAt = equalAt;
const localRangeBefore = rangeBefore;

/** A point source that also knows its range deletions. */
export interface MergeSource extends PointSource {
  tombstoneSeqAt(key: Uint8Array): number;
  /** Optional hint: false while the source has no range deletion that could cover any later key (the merge then skips {@link tombstoneSeqAt}). */
  hasTombstones?: boolean;
}

/**
 * One live key/value pair, as yielded by {@link MergeIterator} (and so by
 * `PebbleDb.iterate()`). The iterator reuses this object and the memory behind
 * `key` and `value`: both are only valid until the iterator advances (the next
 * step of a for-of loop). Copy what you keep (`key.slice()`, `Buffer.from(value)`).
 */
export interface Entry {
  key: Uint8Array;
  value: Uint8Array;
  /**
   * A lower bound of how many leading bytes `key` shares with the previous
   * entry's key in this iteration (0 for the first entry, or when unknown).
   * Comes free from the blocks' prefix compression when consecutive entries
   * come from one sstable; lets a caller that groups keys by prefix skip
   * comparing what is known equal.
   */
  shared: number;
}

const SET = Kind.SET;
const SETWITHDEL = Kind.SETWITHDEL;
const MERGE = Kind.MERGE;
/** Keys and values up to this many bytes are copied into reused scratch memory; longer ones are handed out as views of the source. */
const SMALL = 64;

/** Index of the first byte where two sources' current user keys differ (the shorter length when one is a prefix of the other). */
function firstDiff(a: PointSource, b: PointSource): number {
  const x = a.keyBuf;
  const y = b.keyBuf;
  const xo = a.keyOff;
  const yo = b.keyOff;
  const n = a.keyLen < b.keyLen ? a.keyLen : b.keyLen;
  let i = 0;
  while (i < n && x[xo + i] === y[yo + i]) i++;
  return i;
}

/** Internal-key order of two sources' current entries, given `p = firstDiff(a, b)`; ties go to the lower rank (newer source). */
function before(a: PointSource, b: PointSource, p: number): boolean {
  const xl = a.keyLen;
  const yl = b.keyLen;
  if (p < xl && p < yl) return a.keyBuf[a.keyOff + p]! < b.keyBuf[b.keyOff + p]!;
  if (xl !== yl) return xl < yl;
  if (a.seq !== b.seq) return a.seq > b.seq;
  return a.rank < b.rank;
}

function less(a: PointSource, b: PointSource): boolean {
  return before(a, b, firstDiff(a, b));
}

/** True when the source's current user key equals `key[0, len)`. */
function atKey(s: PointSource, key: Uint8Array, len: number): boolean {
  return s.keyLen === len && localEqualAt(s.keyBuf, s.keyOff, key, 0, len);
}

/**
 * Orders the two sources of a two-element heap after the top advanced. `diffPos`
 * is where the top's previous key first differed from the other's (and was
 * smaller), or -1: if the new key shares more leading bytes with the previous one
 * than that, it is still the smaller one and nothing is compared. Returns the
 * new `diffPos`.
 */
function fixPair(heap: PointSource[], diffPos: number): number {
  const top = heap[0]!;
  const shared = top.sharedPrefix;
  if (diffPos >= 0 && shared !== undefined && shared > diffPos) return diffPos;
  const other = heap[1]!;
  const pos = firstDiff(top, other);
  const topFirst = before(top, other, pos);
  // With equal user keys the order comes from the sequence numbers: no byte position to remember.
  const equal = pos === top.keyLen && pos === other.keyLen;
  if (!topFirst) {
    heap[0] = other;
    heap[1] = top;
  }
  // When one key is a prefix of the other, `pos` is the shorter length: a later key cannot share more than that with it.
  return equal ? -1 : pos;
}

/** True when two sources are at the same user key. */
function sameUserKey(a: PointSource, b: PointSource): boolean {
  return a.keyLen === b.keyLen && localEqualAt(a.keyBuf, a.keyOff, b.keyBuf, b.keyOff, a.keyLen);
}

/** Restores the heap below `i`; returns whether `h[i]` changed. */
function siftDown(h: MergeSource[], i: number): boolean {
  const n = h.length;
  const item = h[i]!;
  const from = i;
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
  return i !== from;
}

/** Reusable scratch memory with cached exact-length views (a view per length, not per entry). */
class Scratch {
  buf = new Uint8Array(SMALL);
  private views: (Uint8Array | undefined)[] = [];

  /** Copies `src[off, off + len)` (len <= SMALL) and returns a view of exactly `len` bytes. */
  copy(src: Uint8Array, off: number, len: number): Uint8Array {
    const b = this.buf;
    for (let i = 0; i < len; i++) b[i] = src[off + i]!;
    return this.views[len] ?? this.view(len);
  }

  private view(len: number): Uint8Array {
    const v = new Uint8Array(this.buf.buffer, 0, len);
    this.views[len] = v;
    return v;
  }
}

/**
 * Iterator over live entries in key order, below `end` (exclusive) if given.
 * Closes every source when exhausted, on `return()` (a `break` out of for-of)
 * or when a source throws. A class rather than a generator: resuming a
 * generator per entry costs more than the rest of the merge step. The yielded
 * entry (and its result object) are reused: see {@link Entry}.
 *
 * Sources are advanced past a yielded key lazily, at the next call: until then
 * the key and value stay in the source's memory, so the entry can point at them
 * instead of copies. When only the top source holds the key and it tracks
 * same-key runs, skipping the key's older versions needs no copy of it either.
 */
export class MergeIterator implements IterableIterator<Entry> {
  private readonly heap: MergeSource[] = [];
  private started = false;
  private finished = false;
  /** The heap's top is at the key yielded last; every source at it still has to move past it. */
  private pending = false;
  /** With two sources: where their current user keys first differ (the top's byte being smaller), or -1 when unknown. */
  private diffPos = -1;
  private readonly keyScratch = new Scratch();
  private readonly valueScratch = new Scratch();
  private readonly entry: Entry = { key: new Uint8Array(0), value: new Uint8Array(0), shared: 0 };
  /** The source of the entry yielded last, and a lower bound of what every key it has moved to since shares with that entry's key. */
  private lastTop: MergeSource | undefined;
  private run = 0;
  private readonly result: IteratorYieldResult<Entry> = { done: false, value: this.entry };

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
      else if (this.pending) {
        this.pending = false;
        this.advance();
      }
      if (this.step()) return this.result;
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

  /** The top source's current user key as a view valid until it advances (the source's own, or a copy). */
  private topKey(top: MergeSource): Uint8Array {
    return top.keyView?.() ?? this.copyKey(top);
  }

  /** A copy of the source's current user key (in scratch memory when short), valid until the next copy. */
  private copyKey(s: MergeSource): Uint8Array {
    const len = s.keyLen;
    const ko = s.keyOff;
    return len <= SMALL ? this.keyScratch.copy(s.keyBuf, ko, len) : s.keyBuf.slice(ko, ko + len);
  }

  /** Moves every source at the top's user key past it (the newest entry and all shadowed ones) and restores the heap. */
  private advance(): void {
    const heap = this.heap;
    const top = heap[0]!;
    const n = heap.length;
    // Another source at the same key can only be a child of the top (heap order).
    if (top.tracksSameKey === true && !(n > 1 && sameUserKey(heap[1]!, top)) && !(n > 2 && sameUserKey(heap[2]!, top))) {
      for (;;) {
        if (!top.next()) {
          this.removeTop();
          return;
        }
        if (top === this.lastTop) this.moved(top);
        if (top.sameAsPrev !== true) break;
      }
      if (n === 2) this.diffPos = fixPair(heap, this.diffPos);
      else if (n > 2) siftDown(heap, 0);
      return;
    }
    this.diffPos = -1;
    // General case: compare against a copy (advancing may overwrite the source's key memory).
    const len = top.keyLen;
    const key = this.copyKey(top);
    let more = this.skipKey(top, key, len);
    while (more) {
      const s = heap[0]!;
      if (!atKey(s, key, len)) break;
      more = this.skipKey(s, key, len);
    }
  }

  /** The source of the last entry moved on by one entry: what its keys are known to share with that entry's narrows. */
  private moved(s: MergeSource): void {
    const p = s.sharedPrefix ?? 0;
    if (p < this.run) this.run = p;
  }

  /** Drops the exhausted top source from the heap and closes it. */
  private removeTop(): void {
    const heap = this.heap;
    const s = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      siftDown(heap, 0);
    }
    s.close();
  }

  /**
   * Advances `s`, the heap's top, past every entry of user key `key[0, len)` and
   * restores the heap. Returns false when the new top is known to be past `key`
   * (`s` itself, at a new key), true when it may still be at `key`.
   */
  private skipKey(s: MergeSource, key: Uint8Array, len: number): boolean {
    const heap = this.heap;
    for (;;) {
      if (!s.next()) {
        this.removeTop();
        return heap.length > 0;
      }
      if (s === this.lastTop) this.moved(s);
      const same = s.sameAsPrev;
      if (same === false || (same === undefined && !atKey(s, key, len))) break;
    }
    return heap.length > 1 && siftDown(heap, 0);
  }

  /** Resolves user keys until one is live (then fills `this.entry`, leaving the sources at it); false at the end. */
  private step(): boolean {
    const heap = this.heap;
    const end = this.end;
    const sources = this.sources;
    while (heap.length > 0) {
      const top = heap[0]!;
      if (end && !localRangeBefore(top.keyBuf, top.keyOff, top.keyLen, end)) return false;
      const seq = top.seq;
      const kind = top.kind;
      if (kind === SET || kind === SETWITHDEL || kind === MERGE) {
        let tomb = -1;
        let key: Uint8Array | undefined;
        for (let i = 0; i < sources.length; i++) {
          const src = sources[i]!;
          if (src.hasTombstones === false) continue;
          key ??= this.topKey(top);
          const t = src.tombstoneSeqAt(key);
          if (t > tomb) tomb = t;
        }
        if (tomb <= seq) {
          if (kind === MERGE)
            throw new PebbleUnsupportedError(
              `MERGE entry ${formatKey({ userKey: this.topKey(top), seq, kind })} is live; merge operators are not supported`,
            );
          top.loadValue();
          const vl = top.valLen;
          const vb = top.valBuf;
          this.entry.value =
            vl <= SMALL ? this.valueScratch.copy(vb, top.valOff, vl) : new Uint8Array(vb.buffer, vb.byteOffset + top.valOff, vl);
          this.entry.key = key ?? this.topKey(top);
          this.entry.shared = top === this.lastTop ? this.run : 0;
          this.lastTop = top;
          this.run = top.keyLen;
          this.pending = true;
          return true;
        }
      }
      this.advance();
    }
    return false;
  }
}
