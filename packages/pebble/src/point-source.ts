/**
 * A sorted stream of point entries (user key ascending, sequence number
 * descending) that the merging iterator consumes: a memtable, one sstable or
 * one level of sstables. The current entry is exposed through fields, not
 * objects, so that advancing allocates nothing.
 */
export interface PointSource {
  /**
   * The current user key is `keyBuf[keyOff, keyOff + keyLen)`. Valid after
   * {@link next} returned true, until the next call; the buffer may be a scratch
   * buffer that the next call overwrites (or replaces).
   */
  keyBuf: Uint8Array;
  keyOff: number;
  keyLen: number;
  seq: number;
  kind: number;
  /**
   * Optional hint, set by {@link next}: true when the current user key equals the
   * previous entry's, false when it differs, undefined when the source cannot tell
   * cheaply (the merge then compares the keys).
   */
  sameAsPrev?: boolean;
  /**
   * Optional, set by {@link next}: a lower bound of how many leading bytes the
   * current user key shares with the previous entry's (0 when unknown). Lets the
   * merge keep a source on top without comparing keys again.
   */
  sharedPrefix?: number;
  /**
   * True when {@link sameAsPrev} is defined for every entry after the first: the
   * merge can then skip older versions of a key without keeping a copy of it.
   */
  readonly tracksSameKey?: boolean;
  /**
   * Optional: an exact-length view of the current user key that stays valid until
   * the next call to {@link next} (e.g. a cached view of a scratch buffer), or
   * undefined; the merge copies the key otherwise.
   */
  keyView?(): Uint8Array | undefined;
  /**
   * Makes `valBuf[valOff, valOff + valLen)` the current entry's value (called
   * at most once per entry, only for entries that turn out live). Valid until
   * the next call to {@link next}.
   */
  loadValue(): void;
  valBuf: Uint8Array;
  valOff: number;
  valLen: number;
  /** Advances; false when exhausted. */
  next(): boolean;
  /** Tie-break between sources for equal (user key, seq): lower = newer source. */
  readonly rank: number;
  close(): void;
}

const EMPTY = new Uint8Array(0);

/**
 * The current-entry fields every real source keeps (memtable, table, level), with
 * their state before the first entry. The sources track same-key runs.
 */
export abstract class PointCursor {
  keyBuf: Uint8Array = EMPTY;
  keyOff = 0;
  keyLen = 0;
  valBuf: Uint8Array = EMPTY;
  valOff = 0;
  valLen = 0;
  seq = 0;
  kind = 0;
  /** See {@link PointSource.sameAsPrev}: undefined only for a source's first entry. */
  sameAsPrev: boolean | undefined = undefined;
  readonly tracksSameKey = true;
}
