import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openPebble, type PebbleDb } from '../src/index.ts';
import { hasV2Fixtures, V2_FIXTURES } from './helpers.ts';

function lcp(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/** Checks `shared` on every entry of a scan; returns what it claimed and what was true, summed. */
function check(db: PebbleDb, range?: { start?: Uint8Array; end?: Uint8Array }): { claimed: number; actual: number; keys: number } {
  let prev: Uint8Array | undefined;
  let claimed = 0;
  let actual = 0;
  let keys = 0;
  for (const e of db.iterate(range)) {
    keys++;
    if (prev === undefined) expect(e.shared).toBe(0);
    else {
      const truth = lcp(prev, e.key);
      if (e.shared > truth) expect.fail(`entry ${keys}: shared ${e.shared} > ${truth} bytes in common with the previous key`);
      claimed += e.shared;
      actual += truth;
    }
    prev = e.key.slice();
  }
  return { claimed, actual, keys };
}

describe.skipIf(!hasV2Fixtures)('Entry.shared', () => {
  it('never claims more than the key shares with the previous one, in full and ranged scans of every v2 shard', () => {
    let shards = 0;
    for (const fixture of readdirSync(V2_FIXTURES)) {
      const db = join(V2_FIXTURES, fixture, 'datadir/db/wukongimdb');
      let names: string[];
      try {
        names = readdirSync(db);
      } catch {
        continue;
      }
      for (const name of names) {
        const pebble = openPebble(join(db, name));
        try {
          check(pebble);
          // ranges cutting through tables (table ids 0x01..0x1a, data types 1..4)
          for (let t = 1; t <= 0x1a; t += 3) check(pebble, { start: Uint8Array.of(t, 1, 1), end: Uint8Array.of(t + 2, 1, 4) });
          shards++;
        } finally {
          pebble.close();
        }
      }
    }
    expect(shards).toBeGreaterThanOrEqual(8);
  });

  it('knows most of what consecutive keys of one sstable share', () => {
    // holdout-closed shard001: one L6 table plus a memtable; keys from the table carry their block's prefix lengths
    const db = openPebble(join(V2_FIXTURES, 'holdout-closed/datadir/db/wukongimdb/shard001'));
    try {
      const { claimed, actual, keys } = check(db);
      expect(keys).toBeGreaterThan(10_000);
      expect(claimed / actual).toBeGreaterThan(0.7);
    } finally {
      db.close();
    }
  });
});
