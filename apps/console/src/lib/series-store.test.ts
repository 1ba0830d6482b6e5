import { describe, expect, it } from 'vitest';
import { snapshot, item } from '../test/fixtures.ts';
import { alignSeries, ringCapacity, SeriesStore, snapshotMetrics } from './series-store.ts';

describe('chart history', () => {
  it('sizes rings as range ÷ refresh interval', () => {
    expect(ringCapacity(900, 2000)).toBe(451);
    expect(ringCapacity(60, 1000)).toBe(61);
    expect(ringCapacity(60, 0)).toBe(31);
  });

  it('keeps one ring per node and metric, ignores samples not newer than the last, and notifies', () => {
    const s = new SeriesStore(3);
    let calls = 0;
    s.subscribe(() => calls++);
    s.push('a', 10, { send: 1 });
    s.push('a', 10, { send: 9 });
    s.push('a', 9, { send: 9 });
    s.push('a', 11, { send: 2, cpu: 5 });
    s.push('a', 12, { send: 3 });
    s.push('a', 13, { send: 4 });
    expect(s.series('a', 'send')).toEqual([
      { t: 11, v: 2 },
      { t: 12, v: 3 },
      { t: 13, v: 4 },
    ]);
    expect(s.series('a', 'cpu')).toEqual([{ t: 11, v: 5 }]);
    expect(s.series('b', 'send')).toEqual([]);
    expect(calls).toBe(4);
    expect(s.collectingSince()).toBe(10);
    s.clear();
    expect(s.series('a', 'send')).toEqual([]);
    expect(s.collectingSince()).toBeUndefined();
  });

  it('takes rates, latency, resources and component scores from a snapshot', () => {
    const m = snapshotMetrics(snapshot('n', { send: 7, items: [item('storage', 'append', 0.7, 'busy')] }));
    expect(m).toMatchObject({ send: 7, sendack: 7, deliver: 5, append_p99: 4, connections: 3, cpu: 12.5, 'score:storage': 0.7 });
  });

  it('aligns lines on the union of their timestamps, with null gaps, from a start time', () => {
    const a = [
      { t: 1, v: 10 },
      { t: 3, v: 30 },
    ];
    const b = [
      { t: 2, v: 20 },
      { t: 3, v: 31 },
    ];
    expect(alignSeries([a, b])).toEqual([
      [1, 2, 3],
      [10, null, 30],
      [null, 20, 31],
    ]);
    expect(alignSeries([a, b], 2)).toEqual([
      [2, 3],
      [null, 30],
      [20, 31],
    ]);
  });
});
