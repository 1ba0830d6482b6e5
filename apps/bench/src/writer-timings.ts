/**
 * The embedded Parley store's writer thread as `/metrics` reports it: its commits
 * (`parley_store_commit_seconds`, a histogram of its time on each committed batch, fsync
 * included) and its pauses beside them (`parley_store_writer_pause_seconds`, a histogram by
 * reason). Read before and after a phase, the difference says how many batches the writer
 * committed and how many of those took over 20 ms, and how often it stopped committing
 * beside them, for how long in all, and how many of those pauses lasted over 20 ms: what a
 * sendack p99 of tens of ms is made of.
 */

/** Observations of one histogram series: how many, their total (ms) and how many lasted over 20 ms. */
export interface Tally {
  count: number;
  ms: number;
  over20ms: number;
}

/** The writer's commits, and its pauses per reason (`wal_restart`, `marks`, …). */
export interface WriterReading {
  /** Undefined from a server without the commit histogram. */
  commits: Tally | undefined;
  pauses: Record<string, Tally>;
}

const COMMITS = 'parley_store_commit_seconds';
const PAUSES = 'parley_store_writer_pause_seconds';

/**
 * The series of histogram `metric` in a Prometheus text exposition, keyed by the value of label
 * `by` ('' without one); undefined when it has none.
 */
function tallies(text: string, metric: string, by: string | undefined): Record<string, Tally> | undefined {
  const out: Record<string, Tally> = {};
  const upTo20 = new Map<string, number>();
  let any = false;
  for (const m of text.matchAll(new RegExp(`^${metric}_(count|sum|bucket)\\{([^}]*)\\} (\\S+)$`, 'gm'))) {
    const labels = new Map([...m[2]!.matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1]!, l[2]!]));
    const key = by === undefined ? '' : labels.get(by);
    const value = Number(m[3]);
    if (key === undefined || !Number.isFinite(value)) continue;
    any = true;
    const t = (out[key] ??= { count: 0, ms: 0, over20ms: 0 });
    if (m[1] === 'count') t.count = value;
    else if (m[1] === 'sum') t.ms = value * 1000;
    else if (labels.get('le') === '0.02') upTo20.set(key, value);
  }
  if (!any) return undefined;
  for (const [key, t] of Object.entries(out)) t.over20ms = t.count - (upTo20.get(key) ?? t.count);
  return out;
}

/** The reading in a Prometheus text exposition; undefined when it has neither histogram (PostgreSQL, an older server). */
export function parseWriterTimings(text: string): WriterReading | undefined {
  const commits = tallies(text, COMMITS, undefined)?.[''];
  const pauses = tallies(text, PAUSES, 'reason');
  if (commits === undefined && pauses === undefined) return undefined;
  return { commits, pauses: pauses ?? {} };
}

const minus = (a: Tally, b: Tally | undefined): Tally =>
  b === undefined ? a : { count: a.count - b.count, ms: a.ms - b.ms, over20ms: a.over20ms - b.over20ms };

/**
 * What happened between two readings (`after` − `before`): the commits, and the pauses per reason
 * of `after` (a reason `before` lacks counts from zero); undefined unless both readings were taken.
 */
export function timingsBetween(before: WriterReading | undefined, after: WriterReading | undefined): WriterReading | undefined {
  if (!before || !after) return undefined;
  const pauses: Record<string, Tally> = {};
  for (const [reason, a] of Object.entries(after.pauses)) pauses[reason] = minus(a, before.pauses[reason]);
  return { commits: after.commits && before.commits ? minus(after.commits, before.commits) : undefined, pauses };
}

/**
 * A result's counts for a phase's writer: `storeCommits`, `storeCommitMs`, `storeCommitsOver20ms`,
 * and per pause reason `writerPauses:<reason>`, `writerPauseMs:<reason>`, `writerPausesOver20ms:<reason>`.
 */
export function timingCounts(r: WriterReading | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  const ms = (t: Tally) => Math.round(t.ms * 10) / 10;
  if (r?.commits) {
    out.storeCommits = r.commits.count;
    out.storeCommitMs = ms(r.commits);
    out.storeCommitsOver20ms = r.commits.over20ms;
  }
  for (const [reason, t] of Object.entries(r?.pauses ?? {})) {
    out[`writerPauses:${reason}`] = t.count;
    out[`writerPauseMs:${reason}`] = ms(t);
    out[`writerPausesOver20ms:${reason}`] = t.over20ms;
  }
  return out;
}
