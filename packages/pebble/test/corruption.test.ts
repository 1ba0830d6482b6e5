import { readdirSync, readFileSync, renameSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openPebble, PebbleCorruptionError, PebbleUnsupportedError, Sstable, type PebbleDb } from '../src/index.ts';
import { hasV2Fixtures, liveDigest, removeTempCopies, tempCopy, V2_FIXTURES } from './helpers.ts';

afterAll(removeTempCopies);

const shard = (fixture: string, n: number): string => join(V2_FIXTURES, fixture, `datadir/db/wukongimdb/shard00${n}`);

function scanAll(db: PebbleDb): number {
  let n = 0;
  for (const _ of db.iterate()) n++;
  return n;
}

function flip(buf: Buffer, at: number, mask: number): void {
  buf[at] = buf[at]! ^ mask;
}

function caught(fn: () => unknown): Error {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected an error');
}

describe.skipIf(!hasV2Fixtures)('corrupted copies of v2 fixtures', () => {
  it('a flipped byte in a data block: checksum error naming the table and block offset, no silent data', () => {
    const dir = tempCopy(shard('edge-flushed', 0));
    const sst = readdirSync(dir)
      .filter((f) => f.endsWith('.sst'))
      .sort()[0]!;
    const path = join(dir, sst);
    const table = new Sstable(path);
    const blocks = [...table.dataBlockHandles()];
    table.close();
    const victim = blocks[Math.floor(blocks.length / 2)]!.handle;
    const buf = readFileSync(path);
    flip(buf, victim.offset + 10, 0x01);
    writeFileSync(path, buf);
    const db = openPebble(dir);
    const err = caught(() => scanAll(db));
    expect(err).toBeInstanceOf(PebbleCorruptionError);
    expect((err as PebbleCorruptionError).file).toBe(path);
    expect((err as PebbleCorruptionError).offset).toBe(victim.offset);
    expect(err.message).toMatch(/checksum mismatch in data block/);
  });

  it('a truncated last WAL: refused by default with file and offset; opt-in truncation reads up to the tear', () => {
    const src = shard('basic-crash', 0);
    const dir = tempCopy(src);
    const wal = readdirSync(dir).find((f) => f.endsWith('.log'))!;
    const path = join(dir, wal);
    const size = readFileSync(path).length;
    truncateSync(path, size - 5);
    const err = caught(() => openPebble(dir));
    expect(err).toBeInstanceOf(PebbleCorruptionError);
    expect((err as PebbleCorruptionError).file).toBe(path);
    expect((err as PebbleCorruptionError).offset).toBeGreaterThan(0);
    expect(err.message).toMatch(/000005\.log at offset \d+: log: chunk length \d+ runs past.*walTail: 'truncate'/);
    const lenient = openPebble(dir, { walTail: 'truncate' });
    const w = lenient.stats().wals[0]!;
    expect(w.end).toBe('torn');
    expect(w.batches).toBe(6);
    const full = liveDigest(openPebble(src)).keys;
    expect(scanAll(lenient)).toBeLessThan(full);
  });

  it('a torn non-last WAL is an error even with walTail: truncate (strict_wal_tail)', () => {
    const src = join(V2_FIXTURES, 'holdout-closed/datadir/db/wukongimdb');
    const withTwo = readdirSync(src).find((s) => readdirSync(join(src, s)).filter((f) => f.endsWith('.log')).length >= 2)!;
    const dir = tempCopy(join(src, withTwo));
    const first = readdirSync(dir)
      .filter((f) => f.endsWith('.log'))
      .sort()[0]!;
    const path = join(dir, first);
    const buf = readFileSync(path);
    flip(buf, 100, 0xff);
    writeFileSync(path, buf);
    const err = caught(() => openPebble(dir, { walTail: 'truncate' }));
    expect(err).toBeInstanceOf(PebbleCorruptionError);
    expect((err as PebbleCorruptionError).file).toBe(path);
    expect(err.message).toMatch(/checksum mismatch/);
  });

  it('a missing sstable: error naming the file', () => {
    const dir = tempCopy(shard('edge-closed', 0));
    const sst = readdirSync(dir)
      .filter((f) => f.endsWith('.sst'))
      .sort()[0]!;
    rmSync(join(dir, sst));
    const err = caught(() => openPebble(dir));
    expect(err).toBeInstanceOf(PebbleCorruptionError);
    expect(err.message).toContain(join(dir, sst));
    expect(err.message).toMatch(/listed in MANIFEST-\d+ is missing/);
  });

  it('an sstable whose size differs from the MANIFEST', () => {
    const dir = tempCopy(shard('edge-closed', 0));
    const sst = readdirSync(dir)
      .filter((f) => f.endsWith('.sst'))
      .sort()[0]!;
    truncateSync(join(dir, sst), 100);
    expect(() => openPebble(dir)).toThrow(/size is 100 bytes, MANIFEST-\d+ records \d+/);
  });

  it('a flipped byte in a footer magic', () => {
    const dir = tempCopy(shard('basic-flushed', 1));
    const sst = readdirSync(dir).find((f) => f.endsWith('.sst'))!;
    const buf = readFileSync(join(dir, sst));
    flip(buf, buf.length - 1, 0x01);
    writeFileSync(join(dir, sst), buf);
    expect(() => scanAll(openPebble(dir))).toThrow(/bad magic number/);
  });

  it('format major version above 14 is refused, naming the version', () => {
    const dir = tempCopy(shard('basic-closed', 2));
    renameSync(join(dir, 'marker.format-version.000013.014'), join(dir, 'marker.format-version.000014.019'));
    const err = caught(() => openPebble(dir));
    expect(err).toBeInstanceOf(PebbleUnsupportedError);
    expect(err.message).toMatch(/format major version 19; this reader supports up to 14/);
  });

  it('the highest marker iteration wins and a malformed marker is corruption', () => {
    const dir = tempCopy(shard('basic-closed', 2));
    writeFileSync(join(dir, 'marker.format-version.000001.019'), '');
    expect(openPebble(dir).formatMajorVersion).toBe(14);
    writeFileSync(join(dir, 'marker.bogus'), '');
    expect(() => openPebble(dir)).toThrow(/marker\.bogus: unparsable marker file name/);
  });
});
