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

/** One reason's pauses since the store opened. */
export interface WriterPauseTotals {
  count: number;
  /** Their summed duration, ms. */
  totalMs: number;
  /** The longest, ms (0 before the first). */
  maxMs: number;
}

/** Called with each pause as the writer thread reports it, its duration in ms. */
export type WriterPauseListener = (reason: WriterPauseReason, ms: number) => void;

/** The writer thread's pauses, counted as it reports them; listeners (the metrics) see each one. */
export class WriterPauses {
  readonly totals: Record<WriterPauseReason, WriterPauseTotals> = {
    wal_restart: { count: 0, totalMs: 0, maxMs: 0 },
    marks: { count: 0, totalMs: 0, maxMs: 0 },
  };
  private readonly listeners = new Set<WriterPauseListener>();

  record(reason: WriterPauseReason, ms: number): void {
    const t = this.totals[reason];
    t.count++;
    t.totalMs += ms;
    if (ms > t.maxMs) t.maxMs = ms;
    for (const l of this.listeners) l(reason, ms);
  }

  /** Calls `listener` on every pause from now on; the function returned stops it. */
  onPause(listener: WriterPauseListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
