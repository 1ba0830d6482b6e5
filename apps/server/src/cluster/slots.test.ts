import { describe, expect, it } from 'vitest';
import { crc32 } from '@parley/shared';
import { SlotTable, slotQuota, slotsToRelease } from './slots.ts';

describe('SlotTable', () => {
  const table = new SlotTable(12, 256);

  it('hashes a channel id with CRC-32 into 256 hash slots, and its command log with it', () => {
    expect(table.hashSlotOf('g1')).toBe(crc32('g1') % 256);
    expect(table.hashSlotOf('g1____cmd')).toBe(table.hashSlotOf('g1'));
    expect(table.slotOf('a@b____cmd')).toBe(table.slotOf('a@b'));
  });

  it('maps hash slots onto physical slots in contiguous ranges that cover every hash slot once', () => {
    const seen: number[] = [];
    for (let slot = 0; slot < 12; slot++) {
      const { from, to } = table.hashSlotsOf(slot);
      for (let h = from; h <= to; h++) {
        expect(table.slotOfHashSlot(h)).toBe(slot);
        seen.push(h);
      }
    }
    expect(seen).toEqual(Array.from({ length: 256 }, (_, i) => i));
  });

  it('spreads many channels over every physical slot', () => {
    const counts = new Array<number>(12).fill(0);
    for (let i = 0; i < 12_000; i++) counts[table.slotOf(`group-${i}`)]!++;
    for (const c of counts) expect(c).toBeGreaterThan(600);
  });

  it('refuses a slot count outside 1..hash slots', () => {
    expect(() => new SlotTable(0, 256)).toThrow(RangeError);
    expect(() => new SlotTable(257, 256)).toThrow(RangeError);
  });
});

describe('slot balance', () => {
  it('gives each of n nodes between floor and ceil of slots/n', () => {
    expect(slotQuota(12, 3)).toEqual({ floor: 4, ceil: 4 });
    expect(slotQuota(12, 5)).toEqual({ floor: 2, ceil: 3 });
    expect(slotQuota(12, 0)).toEqual({ floor: 12, ceil: 12 });
  });

  it('releases the excess, highest slots first, only when a live node is short', () => {
    const held = [0, 1, 2, 3, 4, 5];
    expect(
      slotsToRelease(
        held,
        new Map([
          [1, 6],
          [2, 6],
          [3, 0],
        ]),
        12,
      ),
    ).toEqual([5, 4]);
    // Two nodes: six each is the ceiling, nothing to give.
    expect(
      slotsToRelease(
        held,
        new Map([
          [1, 6],
          [2, 6],
        ]),
        12,
      ),
    ).toEqual([]);
    // Over the ceiling but nobody below the floor (the extra slots are orphans someone else may take): keep them.
    expect(
      slotsToRelease(
        [0, 1, 2, 3, 4],
        new Map([
          [1, 5],
          [2, 4],
          [3, 4],
        ]),
        12,
      ),
    ).toEqual([]);
  });
});
