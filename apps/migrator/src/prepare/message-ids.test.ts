import { describe, expect, it } from 'vitest';
import { MessageIdTable } from './message-ids.ts';

describe('MessageIdTable', () => {
  it('agrees with a map on 50,000 ids (snowflake-like runs, repeats, both halves varied), across growth', () => {
    const table = new MessageIdTable();
    const ref = new Map<string, number>();
    let seed = 12345;
    const rand = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
    const base = 2028498040494493696n;
    for (let row = 0; row < 50_000; row++) {
      let id: string;
      const pick = rand() % 4;
      if (pick === 0)
        id = (base + BigInt(row)).toString(); // consecutive: only the last ten digits differ
      else if (pick === 1)
        id = (base + BigInt(rand()) * 10_000_000_000n).toString(); // only the leading digits differ
      else if (pick === 2)
        id = String(rand() % 1000); // short ids, and repeats
      else id = (BigInt(rand()) * BigInt(rand()) * 4099n).toString();
      const want = ref.get(id) ?? -1;
      if (want < 0) ref.set(id, row);
      expect(table.addOrGet(id, row)).toBe(want);
    }
    expect(table.addOrGet('18446744073709551615', 1)).toBe(-1);
    expect(table.addOrGet('18446744073709551615', 2)).toBe(1);
    expect(table.addOrGet('18446744073709551614', 3)).toBe(-1);
  });

  it('keeps strings that are not canonical decimals apart from the ids they would read as', () => {
    const table = new MessageIdTable();
    expect(table.addOrGet('7', 0)).toBe(-1);
    for (const [row, id] of ['007', '', 'abc', '123456789012345678901', '7 '].entries()) {
      expect(table.addOrGet(id, row + 1)).toBe(-1);
      expect(table.addOrGet(id, 99)).toBe(row + 1);
    }
    expect(table.addOrGet('7', 99)).toBe(0);
    expect(table.addOrGet('0', 10)).toBe(-1);
    expect(table.addOrGet('0', 11)).toBe(10);
  });
});
