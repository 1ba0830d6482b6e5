/**
 * A sorted stream of point entries (user key ascending, sequence number
 * descending) that the merging iterator consumes: a memtable, one sstable or
 * one level of sstables.
 */
export interface PointSource {
  /** Current entry; valid after {@link next} returned true, until the next call. */
  userKey: Uint8Array;
  seq: number;
  kind: number;
  /** Value of the current entry (a view that stays valid after advancing). */
  value(): Uint8Array;
  /** Advances; false when exhausted. */
  next(): boolean;
  /** Tie-break between sources for equal (user key, seq): lower = newer source. */
  readonly rank: number;
  close(): void;
}
