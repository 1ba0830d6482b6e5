import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compareBytes } from '../src/internal-key.ts';
import { openPebble, PebbleError, Sstable, TableIter, type PebbleDb } from '../src/index.ts';
import { hasPebbleFixtures, hasV2Fixtures, PEBBLE_FIXTURES, V2_FIXTURES } from './helpers.ts';

const shard = (fixture: string, n: number): string => join(V2_FIXTURES, fixture, `datadir/db/wukongimdb/shard00${n}`);
/** Shards with sstables in L6 only (holdout: one large table and a large memtable), in L0 and L6, and with memtable range deletions. */
const SHARDS: [string, number][] = [
  ['holdout-closed', 0],
  ['holdout-closed', 1],
  ['holdout-closed', 5],
  ['edge-flushed', 0],
  ['edge-closed', 5],
  ['basic-closed', 5],
  ['basic-flushed', 2],
];

interface Kv {
  key: Buffer;
  value: Buffer;
}

function scan(db: PebbleDb, range?: { start?: Uint8Array; end?: Uint8Array }): Kv[] {
  return Array.from(db.iterate(range), (e) => ({ key: Buffer.from(e.key), value: Buffer.from(e.value) }));
}

/** Paths of the live sstables of `db`. */
function tablePaths(db: PebbleDb): string[] {
  const s = db.stats();
  return s.levels.flatMap((l) => l.files.map((f) => join(s.dir, `${String(f.fileNum).padStart(6, '0')}.sst`)));
}

/**
 * Range boundaries over `all`: every 37th key, a key just above and a prefix just
 * below it, and every data-block separator of every table (seeks that land
 * exactly on, between and inside blocks).
 */
function boundaries(db: PebbleDb, all: Kv[]): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < all.length; i += 37) {
    const k = all[i]!.key;
    out.push(k, Buffer.concat([k, Buffer.from([0])]));
    if (k.length > 1) out.push(k.subarray(0, k.length - 1));
  }
  for (const p of tablePaths(db)) {
    const t = new Sstable(p);
    for (const { separator } of t.dataBlockHandles()) out.push(Buffer.from(separator), Buffer.concat([separator, Buffer.from([0xff])]));
    t.close();
  }
  out.sort(Buffer.compare);
  return out.filter((b, i) => i === 0 || !b.equals(out[i - 1]!));
}

/** Index of the first entry of `all` whose key is >= `key`. */
function lowerBound(all: Kv[], key: Uint8Array): number {
  let lo = 0;
  let hi = all.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (compareBytes(all[mid]!.key, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Undefined when `got` equals `want` entry for entry, else where they first differ. */
function firstDifference(got: Kv[], want: Kv[]): string | undefined {
  for (let i = 0; i < Math.max(got.length, want.length); i++) {
    const g = got[i];
    const w = want[i];
    if (!g || !w || !g.key.equals(w.key) || !g.value.equals(w.value)) {
      return `entry ${i}: got ${g ? g.key.toString('hex') : 'nothing'}, want ${w ? w.key.toString('hex') : 'nothing'} (${got.length} vs ${want.length} entries)`;
    }
  }
  return undefined;
}

describe.skipIf(!hasV2Fixtures)('ranged iteration', () => {
  it.each(SHARDS)('%s shard00%i: consecutive ranges give exactly the full scan, cut at the boundaries', (fixture, n) => {
    const db = openPebble(shard(fixture, n));
    const all = scan(db);
    expect(all.length).toBeGreaterThan(0);
    const bounds = boundaries(db, all);
    expect(bounds.length).toBeGreaterThan(10);
    const edges: (Buffer | undefined)[] = [undefined, ...bounds, undefined];
    const joined: Kv[] = [];
    for (let i = 0; i + 1 < edges.length; i++) {
      const start = edges[i];
      const end = edges[i + 1];
      const got = scan(db, { start, end });
      const want = all.slice(start ? lowerBound(all, start) : 0, end ? lowerBound(all, end) : all.length);
      const diff = firstDifference(got, want);
      if (diff) expect.fail(`range ${i} [${start?.toString('hex') ?? '-'}, ${end?.toString('hex') ?? '-'}): ${diff}`);
      joined.push(...got);
    }
    expect(firstDifference(joined, all)).toBeUndefined();
    // Every table was opened once, however many iterations read it.
    expect(db.stats().scans.iterations).toBe(edges.length);
    expect(db.stats().scans.tablesOpened).toBe(tablePaths(db).length);
    db.close();
  });

  it('get() of every 53rd key and of absent keys agrees with the full scan', () => {
    const db = openPebble(shard('holdout-closed', 3));
    const all = scan(db);
    for (let i = 0; i < all.length; i += 53) {
      const { key, value } = all[i]!;
      expect(Buffer.from(db.get(key)!).equals(value)).toBe(true);
      const above = Buffer.concat([key, Buffer.from([0])]);
      const next = all[i + 1];
      const want = next?.key.equals(above) ? next.value : undefined;
      const got = db.get(above);
      expect(got && Buffer.from(got)).toStrictEqual(want);
    }
    expect(db.stats().scans.tablesOpened).toBe(1);
    db.close();
  });

  it('opens each table once across many iterate() calls', () => {
    const db = openPebble(shard('edge-flushed', 0));
    const tables = tablePaths(db).length;
    expect(tables).toBe(3);
    expect(db.stats().scans.tablesOpened).toBe(0);
    const all = scan(db);
    expect(db.stats().scans.tablesOpened).toBe(tables);
    for (let i = 0; i < 200; i++) {
      const k = all[(i * 7) % all.length]!.key;
      for (const _ of db.iterate({ start: k, end: Buffer.concat([k, Buffer.from([0])]) }));
      scan(db);
    }
    expect(db.stats().scans).toMatchObject({ iterations: 401, tablesOpened: tables });
    db.close();
  });

  it('close(): iterate and get throw a clear error, a running iterator fails at its next read, stats stay readable', () => {
    const db = openPebble(shard('holdout-closed', 1));
    const running = db.iterate();
    expect(running.next().done).toBe(false);
    db.close();
    expect(() => db.iterate()).toThrow(PebbleError);
    expect(() => db.iterate({ start: Buffer.from([1]) })).toThrow(/database .*shard001 is closed/);
    expect(() => db.get(Buffer.from([1]))).toThrow(/is closed/);
    expect(() => {
      for (let r = running.next(); !r.done; r = running.next());
    }).toThrow(/pebble: .*000021\.sst is closed/);
    db.close();
    expect(db.stats().scans.tablesOpened).toBe(1);
  });

  it('bytesRead counts every byte read once: a second full scan adds exactly the data blocks', () => {
    // One table of 34 data blocks (and a memtable).
    const db = openPebble(shard('holdout-closed', 1));
    const [path] = tablePaths(db);
    // What reading the table on its own costs: metadata and index once, then its data blocks.
    const t = new Sstable(path!);
    t.rangeDeletions();
    const it = new TableIter(t, undefined, 0);
    while (it.next());
    const fresh = t.file.bytesRead;
    const blocks = t.dataBlockHandles();
    const dataBytes = blocks.reduce((n, b) => n + b.handle.length + 5, 0);
    t.close();
    expect(blocks.length).toBeGreaterThan(2);
    expect(db.stats().scans.bytesRead).toBe(0);
    scan(db);
    expect(db.stats().scans.bytesRead).toBe(fresh);
    scan(db);
    expect(db.stats().scans.bytesRead).toBe(fresh + dataBytes);
    // Two iterations in step: the second finds each block the first just read (the table keeps its last block).
    const a = db.iterate();
    const b = db.iterate();
    while (!a.next().done) b.next();
    while (!b.next().done);
    expect(db.stats().scans.bytesRead).toBe(fresh + 2 * dataBytes);
    db.close();
    expect(db.stats().scans.bytesRead).toBe(fresh + 2 * dataBytes);
  });

  it('consecutive small ranges inside one data block read it once', () => {
    const db = openPebble(shard('holdout-closed', 1));
    const all = scan(db);
    const before = db.stats().scans.bytesRead;
    const mid = Math.floor(all.length / 2);
    const got: Kv[] = [];
    for (let i = mid; i < mid + 20; i += 2) got.push(...scan(db, { start: all[i]!.key, end: all[i + 1]!.key }));
    expect(
      firstDifference(
        got,
        all.slice(mid, mid + 20).filter((_, i) => i % 2 === 0),
      ),
    ).toBeUndefined();
    const t = new Sstable(tablePaths(db)[0]!);
    const sizes = t.dataBlockHandles().map((b) => b.handle.length + 5);
    t.close();
    // At most the block the ranges start in and, if they cross into it, the next one.
    expect(db.stats().scans.bytesRead - before).toBeLessThanOrEqual(2 * Math.max(...sizes));
    db.close();
  });
});

describe.skipIf(!hasPebbleFixtures)('table iterator seeks (single and two-level indexes)', () => {
  const SST = join(PEBBLE_FIXTURES, 'sstable/testdata');
  const names = ['h.sst', 'h.no-compression.two_level_index.sst', 'h.ldb', 'h.zstd-compression.sst'];
  it.each(names)('%s: a seek yields exactly the entries at or after the start key', (name) => {
    const t = new Sstable(join(SST, name));
    const all: string[] = [];
    const full = new TableIter(t, undefined, 0);
    while (full.next()) all.push(Buffer.from(full.userKey).toString('latin1'));
    const starts = [
      ...all.filter((_, i) => i % 29 === 0),
      ...t.dataBlockHandles().map((b) => Buffer.from(b.separator).toString('latin1')),
      '',
      'a',
      'zzzz',
    ];
    for (const s of starts) {
      for (const start of [s, `${s}\u0000`]) {
        const it = new TableIter(t, Buffer.from(start, 'latin1'), 0);
        const got: string[] = [];
        while (it.next()) got.push(Buffer.from(it.userKey).toString('latin1'));
        expect(got, `start ${JSON.stringify(start)}`).toStrictEqual(all.filter((k) => k >= start));
      }
    }
    if (name.includes('two_level')) expect(t.properties.indexType).toBe(2);
    t.close();
  });
});
