/**
 * The embedded Parley store's writer pauses as `/metrics` reports them
 * (`parley_store_writer_pause_seconds`, a histogram by reason): read before and
 * after a phase, the difference says how often the writer stopped committing
 * beside its commits during it, for how long in all, and how many of those
 * pauses lasted over 20 ms (what a sendack p99 of tens of ms is made of).
 */

/** One reason's pauses: how many, their total (ms) and how many lasted over 20 ms. */
export interface PauseTally {
  count: number;
  ms: number;
  over20ms: number;
}

/** Per reason (`wal_restart`, `marks`, …). */
export type WriterPauseReading = Record<string, PauseTally>;

const SERIES = /^parley_store_writer_pause_seconds_(count|sum|bucket)\{([^}]*)\} (\S+)$/gm;

/** The reading in a Prometheus text exposition; undefined when it has no such histogram (PostgreSQL, an older server). */
export function parseWriterPauses(text: string): WriterPauseReading | undefined {
  const out: WriterPauseReading = {};
  const tally = (reason: string) => (out[reason] ??= { count: 0, ms: 0, over20ms: 0 });
  const upTo20 = new Map<string, number>();
  let any = false;
  for (const m of text.matchAll(SERIES)) {
    const labels = new Map([...m[2]!.matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1]!, l[2]!]));
    const reason = labels.get('reason');
    const value = Number(m[3]);
    if (reason === undefined || !Number.isFinite(value)) continue;
    any = true;
    if (m[1] === 'count') tally(reason).count = value;
    else if (m[1] === 'sum') tally(reason).ms = value * 1000;
    else if (labels.get('le') === '0.02') upTo20.set(reason, value);
  }
  if (!any) return undefined;
  for (const [reason, t] of Object.entries(out)) t.over20ms = t.count - (upTo20.get(reason) ?? t.count);
  return out;
}

/**
 * What happened between two readings (`after` − `before`), per reason of `after` (a reason
 * `before` lacks counts from zero); undefined unless both readings were taken.
 */
export function pausesBetween(
  before: WriterPauseReading | undefined,
  after: WriterPauseReading | undefined,
): WriterPauseReading | undefined {
  if (!before || !after) return undefined;
  const out: WriterPauseReading = {};
  for (const [reason, a] of Object.entries(after)) {
    const b = before?.[reason] ?? { count: 0, ms: 0, over20ms: 0 };
    out[reason] = { count: a.count - b.count, ms: a.ms - b.ms, over20ms: a.over20ms - b.over20ms };
  }
  return out;
}

/** A result's counts for a phase's pauses: `writerPauses:<reason>`, `writerPauseMs:<reason>`, `writerPausesOver20ms:<reason>`. */
export function pauseCounts(p: WriterPauseReading | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [reason, t] of Object.entries(p ?? {})) {
    out[`writerPauses:${reason}`] = t.count;
    out[`writerPauseMs:${reason}`] = Math.round(t.ms * 10) / 10;
    out[`writerPausesOver20ms:${reason}`] = t.over20ms;
  }
  return out;
}
