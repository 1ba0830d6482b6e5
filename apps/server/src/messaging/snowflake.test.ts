import { describe, expect, it } from 'vitest';
import { createSnowflake } from './snowflake.ts';

describe('snowflake', () => {
  it('puts the node id in bits 12-21 and the epoch ms above them', () => {
    const t = 1_788_000_000_000;
    const id = createSnowflake(513, () => t).next();
    expect((id >> 12n) & 1023n).toBe(513n);
    expect(id >> 22n).toBe(BigInt(t - 1288834974657));
  });

  it('stays strictly increasing within a ms, past 4096 ids, and when the clock steps back', () => {
    let now = 1_788_000_000_000;
    const gen = createSnowflake(1, () => now);
    let last = 0n;
    for (let i = 0; i < 10_000; i++) {
      if (i === 5000) now -= 1000;
      const id = gen.next();
      expect(id).toBeGreaterThan(last);
      last = id;
    }
  });

  it('refuses node ids outside 1..1023', () => {
    expect(() => createSnowflake(0)).toThrow(RangeError);
    expect(() => createSnowflake(1024)).toThrow(RangeError);
  });
});
