import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openPebble, readManifest, Sstable, TableIter, type PebbleDb } from '../src/index.ts';
import { bytes, hasPebbleFixtures, PEBBLE_FIXTURES, text } from './helpers.ts';

const TESTDATA = join(PEBBLE_FIXTURES, 'testdata');
const SST = join(PEBBLE_FIXTURES, 'sstable/testdata');

function contents(db: PebbleDb): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of db.iterate()) out[text(e.key)] = text(e.value);
  return out;
}

describe.skipIf(!hasPebbleFixtures)("Pebble's RocksDB-written databases", () => {
  it('db-stage-4 reads exactly {foo: five, quux: six} (sstable + WAL merge)', () => {
    const db = openPebble(join(TESTDATA, 'db-stage-4'));
    expect(contents(db)).toStrictEqual({ foo: 'five', quux: 'six' });
    expect(db.formatMajorVersion).toBe(1);
    const s = db.stats();
    expect(s.manifest).toBe('MANIFEST-000005');
    expect(s.levels[0]!.files).toStrictEqual([{ fileNum: 4, size: 986 }]);
    expect(s.wals.map((w) => [w.name, w.batches, w.firstSeq, w.lastSeq])).toStrictEqual([['000006.log', 3, 6, 8]]);
    expect(text(db.get(bytes('foo'))!)).toBe('five');
    expect(db.get(bytes('baz'))).toBeUndefined();
    expect(db.get(bytes('bar'))).toBeUndefined();
  });

  it('db-stage-1..3 read as their WAL and sstable contents say', () => {
    expect(contents(openPebble(join(TESTDATA, 'db-stage-1')))).toStrictEqual({});
    expect(contents(openPebble(join(TESTDATA, 'db-stage-2')))).toStrictEqual({ foo: 'four', baz: 'three' });
    const stage3 = openPebble(join(TESTDATA, 'db-stage-3'));
    expect(contents(stage3)).toStrictEqual({ foo: 'four', baz: 'three' });
    expect(stage3.stats().wals.map((w) => w.name)).toStrictEqual(['000006.log']);
  });

  it('db-stage-2 WAL decodes to seq 1..5 (legacy chunks)', () => {
    const w = openPebble(join(TESTDATA, 'db-stage-2')).stats().wals;
    expect(w).toHaveLength(1);
    expect(w[0]).toMatchObject({ name: '000003.log', batches: 5, ops: 5, firstSeq: 1, lastSeq: 5, kinds: { SET: 4, DEL: 1 }, end: 'eof' });
  });

  it('refuses rocksdb-ingest-only: its comparer is not bytewise', () => {
    expect(() => openPebble(join(TESTDATA, 'rocksdb-ingest-only'))).toThrow(
      /comparer "cockroach_comparator".*only leveldb\.BytewiseComparator/,
    );
  });
});

describe.skipIf(!hasPebbleFixtures)('h.* tables against h.txt', () => {
  const expected = new Map<string, number>();
  if (hasPebbleFixtures) {
    for (const line of readFileSync(join(SST, 'h.txt'), 'utf8').split('\n')) {
      const m = /^\s*(\d+)\s+(\S+)$/.exec(line);
      if (m) expected.set(m[2]!, Number(m[1]));
    }
  }
  const tables = [
    ['h.ldb', '(LevelDB)'],
    ['h.sst', '(RocksDB,v2)'],
    ['h.no-compression.sst', '(RocksDB,v2)'],
    ['h.no-compression.two_level_index.sst', '(RocksDB,v2)'],
    ['h.zstd-compression.sst', '(RocksDB,v2)'],
    ['h.block-bloom.no-compression.sst', '(RocksDB,v2)'],
    ['h.table-bloom.sst', '(RocksDB,v2)'],
    ['h.table-bloom.no-compression.sst', '(RocksDB,v2)'],
    ['h.table-bloom.no-compression.prefix_extractor.no_whole_key_filter.sst', '(RocksDB,v2)'],
  ] as const;
  it.each(tables)('%s gives the counts of h.txt', (name, format) => {
    expect(expected.size).toBe(1710);
    const table = new Sstable(join(SST, name));
    try {
      expect(table.format).toBe(format);
      const it = new TableIter(table, undefined, 0);
      const got = new Map<string, number>();
      let prev = '';
      while (it.next()) {
        const k = text(it.userKey);
        expect(k > prev).toBe(true);
        prev = k;
        expect(it.seq).toBe(0);
        got.set(k, Number(text(it.value())));
      }
      expect(got).toStrictEqual(expected);
      const dels = table.rangeDeletions();
      expect(dels).toHaveLength(17);
      expect(dels.every((d) => d.seq === 0)).toBe(true);
    } finally {
      table.close();
    }
  });

  it('the two-level table really has a two-level index, the zstd one zstd blocks', () => {
    const two = new Sstable(join(SST, 'h.no-compression.two_level_index.sst'));
    expect(two.properties.indexType).toBe(2);
    two.close();
    const z = new Sstable(join(SST, 'h.zstd-compression.sst'));
    expect(z.properties.compression).toBe('ZSTD');
    z.close();
  });
});

describe.skipIf(!hasPebbleFixtures)('negative fixtures fail with clear errors', () => {
  const tool = join(PEBBLE_FIXTURES, 'tool/testdata');
  it('bad-magic.sst', () => {
    expect(() => new Sstable(join(tool, 'bad-magic.sst'))).toThrow(/bad-magic\.sst at offset \d+: bad magic number 0xf6cff485b741e288/);
  });
  it('corrupted.sst: checksum mismatch naming the block', () => {
    const t = new Sstable(join(tool, 'corrupted.sst'));
    const it = new TableIter(t, undefined, 0);
    expect(() => {
      while (it.next());
    }).toThrow(/corrupted\.sst at offset 0: checksum mismatch in data block 0\/57/);
    t.close();
  });
  it('out-of-order.sst: keys out of order', () => {
    const t = new Sstable(join(tool, 'out-of-order.sst'));
    const it = new TableIter(t, undefined, 0);
    const seen: string[] = [];
    expect(() => {
      while (it.next()) seen.push(text(it.userKey));
    }).toThrow(/out-of-order\.sst.*keys out of order: b#0,SET after c#0,SET/);
    expect(seen).toStrictEqual(['a', 'c']);
    t.close();
  });
  it('MANIFEST-invalid: overlapping L6 files', () => {
    expect(() => readManifest(join(tool, 'MANIFEST-invalid'))).toThrow(
      /MANIFEST-invalid at offset 65: files 000002 and 000001 overlap in L6/,
    );
  });
  it('corrupt-options-db: invalid OPTIONS line', () => {
    expect(() => openPebble(join(tool, 'corrupt-options-db'))).toThrow(/OPTIONS-000002: line 1: invalid key=value syntax: "blargle"/);
  });
  it('a missing directory', () => {
    expect(() => openPebble(join(tool, 'non-existent'))).toThrow(/does not exist/);
  });
  it('find-db: comparer alt-comparer is refused', () => {
    expect(() => openPebble(join(tool, 'find-db'))).toThrow(/comparer "alt-comparer"/);
  });
  it('mixed: testkeys comparer refused, but its markers, WALs and Pebblev2 table decode', () => {
    expect(() => openPebble(join(tool, 'mixed'))).toThrow(/comparer "pebble\.internal\.testkeys"/);
    const t = new Sstable(join(tool, 'mixed/000005.sst'));
    expect(t.format).toBe('(Pebble,v2)');
    t.close();
  });
});
