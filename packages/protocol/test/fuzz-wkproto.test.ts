import { expect, it } from 'vitest';
import { runFuzz } from './fuzz-core.ts';

it('decoder survives 400k random, mutated and valid frames (fixed seed) with bounded buffering', () => {
  const stats = runFuzz(20260501, 400_000);
  expect(stats.frames).toBe(400_000);
  expect(stats.packets).toBeGreaterThan(100_000);
  expect(stats.maxBuffered).toBeGreaterThan(60_000);
  expect(stats.maxBuffered).toBeLessThanOrEqual(65_536 + 5);
  const codes = Object.keys(stats.errors);
  for (const code of ['TRUNCATED', 'UNKNOWN_PACKET_TYPE', 'REMAINING_LENGTH_TOO_LARGE', 'BAD_STRING_LENGTH']) {
    expect(codes).toContain(code);
  }
}, 30_000);
