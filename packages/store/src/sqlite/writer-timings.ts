/**
 * Why the embedded store's writer thread stopped committing for a while, beside its commits:
 * - `wal_restart`: the follow-up checkpoint that lets the WAL be written from its start again
 *   (it copies what was committed during the checkpointer's last pass and syncs the database
 *   file; `writer-thread.ts`);
 * - `marks`: the transaction that applies the pending latest-send marks to `memberships`.
 * Batches that arrive meanwhile wait, so under a steady load these set the tail of the send
 * latency.
 */
export type WriterPauseReason = 'wal_restart' | 'marks';

export const WRITER_PAUSE_REASONS: readonly WriterPauseReason[] = ['wal_restart', 'marks'];

/** Called with each pause as the writer thread reports it, its duration in ms. */
export type WriterPauseListener = (reason: WriterPauseReason, ms: number) => void;

/**
 * Called with each batch of messages the writer thread committed: how long the thread spent on
 * it, ms (its statements, the commit and its fsync, and any wait for the core the thread shares).
 * A slow disk shows here first: a commit of tens of ms holds every send of its batch and of the
 * batches behind it.
 */
export type WriterCommitListener = (ms: number) => void;

/**
 * What the writer thread reports of its time, handed to each listener as it arrives (the
 * metrics keep the counts): its commits' durations and its pauses beside them.
 */
export class WriterTimings {
  private readonly pauseListeners = new Set<WriterPauseListener>();
  private readonly commitListeners = new Set<WriterCommitListener>();

  pause(reason: WriterPauseReason, ms: number): void {
    for (const l of this.pauseListeners) l(reason, ms);
  }

  commit(ms: number): void {
    for (const l of this.commitListeners) l(ms);
  }

  /** Calls `listener` on every pause from now on; the function returned stops it. */
  onPause(listener: WriterPauseListener): () => void {
    return subscribe(this.pauseListeners, listener);
  }

  /** Calls `listener` on every committed batch from now on; the function returned stops it. */
  onCommit(listener: WriterCommitListener): () => void {
    return subscribe(this.commitListeners, listener);
  }
}

function subscribe<L>(set: Set<L>, listener: L): () => void {
  set.add(listener);
  return () => set.delete(listener);
}
