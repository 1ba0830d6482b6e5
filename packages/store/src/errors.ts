/** Where an append is allowed: the physical slot of its channels and the epoch of the lease the writer holds. */
export interface AppendFence {
  slot: number;
  epoch: number;
}

/**
 * An append fenced with a lease epoch that is no longer the slot's: another
 * node took the slot over (or the lease was released). Nothing of the batch was
 * written; the writer must stop appending for the slot and let the new owner
 * retry.
 */
export class StaleEpochError extends Error {
  constructor(
    readonly fence: AppendFence,
    /** The slot's epoch now; undefined when the slot has no lease row. */
    readonly currentEpoch: number | undefined,
  ) {
    super(
      `stale slot lease: slot ${fence.slot} epoch ${fence.epoch} is no longer current (` +
        (currentEpoch === undefined ? 'no lease' : `now epoch ${currentEpoch}`) +
        '); nothing was written',
    );
    this.name = 'StaleEpochError';
  }
}

/**
 * A unique-key violation (PostgreSQL 23505, SQLite SQLITE_CONSTRAINT_PRIMARYKEY / _UNIQUE): from
 * `appendBatch`, a `(channel, message_seq)` another writer already took, so cached tails are stale.
 */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}
