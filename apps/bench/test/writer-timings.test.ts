import { describe, expect, it } from 'vitest';
import { parseWriterPauses, pauseCounts, pausesBetween } from '../src/writer-pauses.ts';

/** The histogram as a Parley server's /metrics writes it (labels in prom-client's order, which varies). */
function exposition(marks: { buckets: number[]; sum: number }, restart: { buckets: number[]; sum: number }): string {
  const les = ['0.001', '0.002', '0.005', '0.01', '0.02', '0.05', '0.1', '0.25', '0.5', '1', '+Inf'];
  const lines = [
    '# HELP parley_sends_total Sends received from the gateway and HTTP.',
    'parley_sends_total{node_id="1"} 30000',
    '# TYPE parley_store_writer_pause_seconds histogram',
  ];
  for (const [reason, h, order] of [
    ['wal_restart', restart, 'node-first'],
    ['marks', marks, 'reason-first'],
  ] as const) {
    const labels = order === 'node-first' ? `node_id="1",reason="${reason}"` : `reason="${reason}",node_id="1"`;
    les.forEach((le, i) => lines.push(`parley_store_writer_pause_seconds_bucket{le="${le}",${labels}} ${h.buckets[i]}`));
    lines.push(`parley_store_writer_pause_seconds_sum{${labels}} ${h.sum}`);
    lines.push(`parley_store_writer_pause_seconds_count{${labels}} ${h.buckets.at(-1)}`);
  }
  return lines.join('\n') + '\n';
}

describe("the store writer's pauses from /metrics", () => {
  it('reads each reason: how many, their total in ms and how many lasted over 20 ms', () => {
    const text = exposition(
      { buckets: [0, 0, 2, 6, 7, 8, 8, 8, 8, 8, 8], sum: 0.0713 },
      { buckets: [0, 0, 0, 0, 1, 3, 3, 3, 3, 3, 3], sum: 0.0805 },
    );
    const r = parseWriterPauses(text)!;
    expect(r.marks!.count).toBe(8);
    expect(r.marks!.ms).toBeCloseTo(71.3, 6);
    expect(r.marks!.over20ms).toBe(1);
    expect(r.wal_restart).toEqual({ count: 3, ms: expect.closeTo(80.5, 6) as number, over20ms: 2 });
  });

  it('answers undefined for a server without the histogram', () => {
    expect(parseWriterPauses('parley_sends_total{node_id="1"} 5\n')).toBeUndefined();
  });

  it("counts a phase's pauses as the difference of two readings", () => {
    const before = parseWriterPauses(
      exposition({ buckets: [0, 0, 2, 6, 7, 8, 8, 8, 8, 8, 8], sum: 0.0713 }, { buckets: [0, 0, 0, 0, 1, 3, 3, 3, 3, 3, 3], sum: 0.0805 }),
    );
    const after = parseWriterPauses(
      exposition(
        { buckets: [0, 0, 3, 9, 10, 12, 12, 12, 12, 12, 12], sum: 0.1102 },
        { buckets: [0, 0, 0, 0, 1, 4, 4, 4, 4, 4, 4], sum: 0.1105 },
      ),
    );
    const phase = pausesBetween(before, after)!;
    expect(phase.marks!.count).toBe(4);
    expect(phase.marks!.ms).toBeCloseTo(38.9, 6);
    expect(phase.marks!.over20ms).toBe(1);
    expect(phase.wal_restart!.count).toBe(1);
    expect(phase.wal_restart!.over20ms).toBe(1);
    expect(pauseCounts(phase)).toEqual({
      'writerPauses:wal_restart': 1,
      'writerPauseMs:wal_restart': 30,
      'writerPausesOver20ms:wal_restart': 1,
      'writerPauses:marks': 4,
      'writerPauseMs:marks': 38.9,
      'writerPausesOver20ms:marks': 1,
    });
    expect(pausesBetween(before, undefined)).toBeUndefined();
    // A reading that failed before the phase leaves it without pauses, not with the totals since start.
    expect(pausesBetween(undefined, after)).toBeUndefined();
    expect(pauseCounts(undefined)).toEqual({});
  });
});
