import { describe, expect, it } from 'vitest';
import { latencyHistogram } from './histogram.ts';
import { Ring } from './ring.ts';

describe('Histogram', () => {
  it('gives percentiles within the bucket resolution (20%)', () => {
    const h = latencyHistogram();
    for (let v = 1; v <= 1000; v++) h.record(v / 10);
    expect(h.quantile(h.counts, undefined, 0.5)).toBeGreaterThan(50 * 0.8);
    expect(h.quantile(h.counts, undefined, 0.5)).toBeLessThan(50 * 1.2);
    expect(h.quantile(h.counts, undefined, 0.99)).toBeGreaterThan(99 * 0.8);
    expect(h.quantile(h.counts, undefined, 0.99)).toBeLessThan(100 * 1.2);
  });

  it('measures only what was recorded between two copies', () => {
    const h = latencyHistogram();
    for (let i = 0; i < 100; i++) h.record(500);
    const before = h.counts.slice();
    for (let i = 0; i < 10; i++) h.record(2);
    const p = h.quantile(h.counts, before, 0.99);
    expect(p).toBeGreaterThan(1.6);
    expect(p).toBeLessThan(2.4);
    expect(h.quantile(before, before, 0.5)).toBe(0);
  });
});

describe('Ring', () => {
  it('keeps the newest entries up to its capacity', () => {
    const r = new Ring<number>(3);
    for (let i = 1; i <= 5; i++) r.push(i);
    expect(r.toArray()).toEqual([3, 4, 5]);
    expect(r.last()).toBe(5);
    expect(r.at(0)).toBe(3);
    expect(r.at(3)).toBeUndefined();
  });
});
