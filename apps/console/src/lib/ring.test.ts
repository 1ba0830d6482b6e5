import { describe, expect, it } from 'vitest';
import { Ring } from './ring.ts';

describe('ring buffer', () => {
  it('keeps the newest values up to its capacity, oldest first', () => {
    const r = new Ring<number>(3);
    expect(r.toArray()).toEqual([]);
    expect(r.last()).toBeUndefined();
    for (const v of [1, 2, 3]) r.push(v);
    expect(r.full).toBe(true);
    r.push(4);
    r.push(5);
    expect(r.toArray()).toEqual([3, 4, 5]);
    expect(r.size).toBe(3);
    expect(r.last()).toBe(5);
  });

  it('resizes keeping the newest values that fit, and clears', () => {
    const r = new Ring<number>(4);
    for (let i = 1; i <= 6; i++) r.push(i);
    r.resize(2);
    expect(r.toArray()).toEqual([5, 6]);
    r.resize(5);
    r.push(7);
    expect(r.toArray()).toEqual([5, 6, 7]);
    r.clear();
    expect(r.size).toBe(0);
    expect(r.toArray()).toEqual([]);
  });

  it('has room for at least one value', () => {
    const r = new Ring<number>(0);
    r.push(1);
    r.push(2);
    expect(r.toArray()).toEqual([2]);
  });
});
