import { copyFileSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Kind } from '../src/internal-key.ts';
import { LevelIter } from '../src/level-iter.ts';
import { TableCache } from '../src/table-cache.ts';
import { MergeIterator } from '../src/merge.ts';
import type { FileMetadata } from '../src/version-edit.ts';
import { FIXTURES, hasV2Fixtures } from './helpers.ts';

// Two sstables written by WuKongIM v2: one holding a single user key (…"user02", a deletion), one whose 6 keys sort after it.
const SINGLE = join(FIXTURES, 'v2/edge-flushed/datadir/db/wukongimdb/shard007/000013.sst');
const AFTER = join(FIXTURES, 'v2/edge-flushed/datadir/db/wukongimdb/shard000/000013.sst');
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const K1 = '1301010089a7584f50642117757365723032';
const A = ['1601010069c37279ab8c25d51601', '1601010069c37279ab8c25d51602'];
const root = mkdtempSync(join(tmpdir(), 'pebble-level-'));
const tables = new TableCache(root);
afterAll(() => {
  tables.close();
  rmSync(root, { recursive: true, force: true });
});

/** Copies `src` into `root` as table `num` and describes it (bounds are only used for range deletions, which these tables lack). */
function table(src: string, num: number): FileMetadata {
  copyFileSync(src, join(root, `${String(num).padStart(6, '0')}.sst`));
  const key = { userKey: new Uint8Array(0), seq: 0, kind: Kind.SET };
  return { fileNum: num, size: statSync(src).size, smallest: key, largest: key, smallestSeq: 0, largestSeq: 0 };
}

describe.skipIf(!hasV2Fixtures)('level iterator across tables', () => {
  it("tells whether a table starts with the previous table's last user key", () => {
    const files = [table(SINGLE, 1), table(SINGLE, 2), table(AFTER, 3)];
    const it = new LevelIter(tables, files, undefined, 0);
    const seen: [string, boolean | undefined][] = [];
    while (it.next() && seen.length < 4) seen.push([hex(it.keyBuf.subarray(0, it.keyLen)), it.sameAsPrev]);
    expect(seen).toStrictEqual([
      [K1, undefined],
      [K1, true],
      [A[0], false],
      [A[1], false],
    ]);
  });

  it("the merge resolves a user key split across two tables of a level from the first table's entry", () => {
    const files = [table(SINGLE, 11), table(SINGLE, 12), table(AFTER, 13)];
    const level = new LevelIter(tables, files, undefined, 0);
    const only = new LevelIter(tables, [table(AFTER, 14)], undefined, 0);
    const keys = (l: LevelIter): string[] => Array.from(new MergeIterator([l], undefined), (e) => hex(e.key));
    // The single key is a deletion in both copies: nothing of it may surface, and the rest is untouched.
    const expected = keys(only);
    expect(expected).toHaveLength(6);
    expect(keys(level)).toStrictEqual(expected);
  });
});
