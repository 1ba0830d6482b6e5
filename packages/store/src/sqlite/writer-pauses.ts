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

/** The writer thread's pauses as it reports them, handed to each listener (the metrics keep the counts). */
export class WriterPauses {
  private readonly listeners = new Set<WriterPauseListener>();

  record(reason: WriterPauseReason, ms: number): void {
    for (const l of this.listeners) l(reason, ms);
  }

  /** Calls `listener` on every pause from now on; the function returned stops it. */
  onPause(listener: WriterPauseListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
