import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openPebble } from '../src/index.ts';
import { bytes, hasV2Fixtures, liveDigest, snapshotDir, V2_FIXTURES } from './helpers.ts';

interface ShardStats {
  dir: string;
  live_kv_sha256: string;
  live_point_keys_readonly_iter: number;
  format_major_version_number: number;
  level_file_counts_after_readonly_open: number[];
  wals: { name: string; batches: number; ops: number }[];
}

interface Case {
  name: string;
  path: string;
  expected: ShardStats;
}

/** Pebble DBs in the v2 fixtures: 7 single-node fixtures x 8 shards + 3 nodes x 17 DBs. */
const FIXTURE_DBS = 7 * 8 + 3 * 17;

/**
 * Every pebble DB of every v2 fixture, with the statistics pebble.json gives
 * for it. Without the fixtures, as many unnamed cases, so that a plain clone
 * reports each of them as skipped rather than creating none.
 */
function cases(): Case[] {
  if (!hasV2Fixtures)
    return Array.from({ length: FIXTURE_DBS }, (_, i) => ({
      name: `fixture DB ${i + 1} of ${FIXTURE_DBS}`,
      path: '',
      expected: undefined as never,
    }));
  const out: Case[] = [];
  for (const fixture of readdirSync(V2_FIXTURES).sort()) {
    const pj = join(V2_FIXTURES, fixture, 'pebble.json');
    if (!existsSync(pj)) continue;
    const doc = JSON.parse(readFileSync(pj, 'utf8')) as {
      shards?: ShardStats[];
      nodes?: Record<string, Record<string, ShardStats | ShardStats[]>>;
    };
    const datadir = join(V2_FIXTURES, fixture, 'datadir');
    for (const s of doc.shards ?? []) out.push({ name: `${fixture}/${s.dir}`, path: join(datadir, 'db/wukongimdb', s.dir), expected: s });
    for (const [node, dbs] of Object.entries(doc.nodes ?? {})) {
      for (const [rel, v] of Object.entries(dbs)) {
        const base = join(datadir, `node${node}`, rel);
        if (Array.isArray(v))
          for (const s of v) out.push({ name: `${fixture}/node${node}/${rel}/${s.dir}`, path: join(base, s.dir), expected: s });
        else out.push({ name: `${fixture}/node${node}/${rel}`, path: base, expected: v });
      }
    }
  }
  return out;
}

const all = cases();

describe.skipIf(!hasV2Fixtures)('WuKongIM v2 fixtures: live-set SHA-256', () => {
  it('finds every fixture DB (7 single-node fixtures x 8 shards + 3 nodes x 17 DBs)', () => {
    expect(all).toHaveLength(FIXTURE_DBS);
  });

  it.each(all.map((c) => [c.name, c] as const))('%s: digest, key count, format, levels, WAL batches', (_name, c) => {
    const db = openPebble(c.path);
    const { sha256, keys } = liveDigest(db);
    expect(sha256).toBe(c.expected.live_kv_sha256);
    expect(keys).toBe(c.expected.live_point_keys_readonly_iter);
    expect(db.formatMajorVersion).toBe(c.expected.format_major_version_number);
    const st = db.stats();
    expect(st.levels.map((l) => l.files.length)).toStrictEqual(c.expected.level_file_counts_after_readonly_open);
    expect(st.wals.map((w) => [w.name, w.batches, w.ops])).toStrictEqual(c.expected.wals.map((w) => [w.name, w.batches, w.ops]));
  });
});

describe.skipIf(!hasV2Fixtures)('reading is side-effect free, ranges and get agree with the full scan', () => {
  it('the data directory is byte-identical (names, sizes, modes, mtimes, contents) after opening and scanning', () => {
    const dir = join(V2_FIXTURES, 'edge-crash/datadir');
    const before = snapshotDir(dir);
    for (const c of all.filter((x) => x.name.startsWith('edge-crash/'))) liveDigest(openPebble(c.path));
    expect(snapshotDir(dir)).toStrictEqual(before);
  });

  it('iterate(range) and get(key) match the full scan (edge-closed shard000: L0 + L6 + WAL with range deletions)', () => {
    const db = openPebble(join(V2_FIXTURES, 'edge-closed/datadir/db/wukongimdb/shard000'));
    // Entries are reused views, valid until the iterator advances: copy each one as it comes.
    const full = Array.from(db.iterate(), (e) => [Buffer.from(e.key).toString('hex'), Buffer.from(e.value).toString('hex')] as const);
    expect(full.length).toBeGreaterThan(100);
    const lo = full[Math.floor(full.length / 3)]![0];
    const hi = full[Math.floor((2 * full.length) / 3)]![0];
    const ranged = Array.from(db.iterate({ start: Buffer.from(lo, 'hex'), end: Buffer.from(hi, 'hex') }), (e) =>
      Buffer.from(e.key).toString('hex'),
    );
    expect(ranged).toStrictEqual(full.filter(([k]) => k >= lo && k < hi).map(([k]) => k));
    for (let i = 0; i < full.length; i += 97) {
      const [k, v] = full[i]!;
      expect(Buffer.from(db.get(Buffer.from(k, 'hex'))!).toString('hex')).toBe(v);
    }
    expect(db.get(bytes('\u0000no-such-key'))).toBeUndefined();
  });
});
