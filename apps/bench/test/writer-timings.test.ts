import { describe, expect, it } from 'vitest';
import { parseWriterTimings, timingCounts, timingsBetween } from '../src/writer-timings.ts';

const LES = ['0.001', '0.002', '0.005', '0.01', '0.02', '0.05', '0.1', '0.25', '0.5', '1', '+Inf'];

interface Histogram {
  buckets: number[];
  sum: number;
}

/** One histogram series as prom-client writes it. */
function series(lines: string[], metric: string, labels: string, h: Histogram): void {
  LES.forEach((le, i) => lines.push(`${metric}_bucket{le="${le}",${labels}} ${h.buckets[i]}`));
  lines.push(`${metric}_sum{${labels}} ${h.sum}`);
  lines.push(`${metric}_count{${labels}} ${h.buckets.at(-1)}`);
}

/** The histograms as a Parley server's /metrics writes them (labels in prom-client's order, which varies). */
function exposition(marks: Histogram, restart: Histogram, commits?: Histogram): string {
  const lines = ['# HELP parley_sends_total Sends received from the gateway and HTTP.', 'parley_sends_total{node_id="1"} 30000'];
  if (commits) {
    lines.push('# TYPE parley_store_commit_seconds histogram');
    series(lines, 'parley_store_commit_seconds', 'node_id="1"', commits);
  }
  lines.push('# TYPE parley_store_writer_pause_seconds histogram');
  series(lines, 'parley_store_writer_pause_seconds', 'node_id="1",reason="wal_restart"', restart);
  series(lines, 'parley_store_writer_pause_seconds', 'reason="marks",node_id="1"', marks);
  return lines.join('\n') + '\n';
}

const MARKS = { buckets: [0, 0, 2, 6, 7, 8, 8, 8, 8, 8, 8], sum: 0.0713 };
const RESTART = { buckets: [0, 0, 0, 0, 1, 3, 3, 3, 3, 3, 3], sum: 0.0805 };
const COMMITS = { buckets: [100, 900, 1500, 1580, 1590, 1596, 1598, 1598, 1598, 1598, 1598], sum: 4.25 };

describe("the store writer's commits and pauses from /metrics", () => {
  it('reads the commits and each pause reason: how many, their total in ms and how many lasted over 20 ms', () => {
    const r = parseWriterTimings(exposition(MARKS, RESTART, COMMITS))!;
    expect(r.commits).toEqual({ count: 1598, ms: expect.closeTo(4250, 6) as number, over20ms: 8 });
    expect(r.pauses.marks!.count).toBe(8);
    expect(r.pauses.marks!.ms).toBeCloseTo(71.3, 6);
    expect(r.pauses.marks!.over20ms).toBe(1);
    expect(r.pauses.wal_restart).toEqual({ count: 3, ms: expect.closeTo(80.5, 6) as number, over20ms: 2 });
  });

  it('answers undefined for a server with neither histogram, and no commits for one with the pauses alone', () => {
    expect(parseWriterTimings('parley_sends_total{node_id="1"} 5\n')).toBeUndefined();
    const older = parseWriterTimings(exposition(MARKS, RESTART))!;
    expect(older.commits).toBeUndefined();
    expect(older.pauses.marks!.count).toBe(8);
    expect(timingCounts(older)).not.toHaveProperty('storeCommits');
  });

  it("counts a phase's commits and pauses as the difference of two readings", () => {
    const before = parseWriterTimings(exposition(MARKS, RESTART, COMMITS));
    const after = parseWriterTimings(
      exposition(
        { buckets: [0, 0, 3, 9, 10, 12, 12, 12, 12, 12, 12], sum: 0.1102 },
        { buckets: [0, 0, 0, 0, 1, 4, 4, 4, 4, 4, 4], sum: 0.1105 },
        { buckets: [150, 1400, 2300, 2390, 2400, 2409, 2411, 2411, 2411, 2411, 2411], sum: 6.75 },
      ),
    );
    const phase = timingsBetween(before, after)!;
    expect(phase.commits).toEqual({ count: 813, ms: expect.closeTo(2500, 6) as number, over20ms: 3 });
    expect(phase.pauses.marks!.count).toBe(4);
    expect(phase.pauses.marks!.ms).toBeCloseTo(38.9, 6);
    expect(phase.pauses.marks!.over20ms).toBe(1);
    expect(phase.pauses.wal_restart!.count).toBe(1);
    expect(phase.pauses.wal_restart!.over20ms).toBe(1);
    expect(timingCounts(phase)).toEqual({
      storeCommits: 813,
      storeCommitMs: 2500,
      storeCommitsOver20ms: 3,
      'writerPauses:wal_restart': 1,
      'writerPauseMs:wal_restart': 30,
      'writerPausesOver20ms:wal_restart': 1,
      'writerPauses:marks': 4,
      'writerPauseMs:marks': 38.9,
      'writerPausesOver20ms:marks': 1,
    });
    expect(timingsBetween(before, undefined)).toBeUndefined();
    // A reading that failed before the phase leaves it without figures, not with the totals since start.
    expect(timingsBetween(undefined, after)).toBeUndefined();
    expect(timingCounts(undefined)).toEqual({});
  });
});
