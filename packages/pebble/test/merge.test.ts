import { describe, expect, it } from 'vitest';
import { MergeIterator, type MergeSource } from '../src/merge.ts';
import { fragment, FragmentCursor } from '../src/tombstones.ts';
import { bytes, text } from './helpers.ts';

const K = { DEL: 0, SET: 1, MERGE: 2, SINGLEDEL: 7, SETWITHDEL: 18 } as const;
type Point = [key: string, seq: number, kind: number, value?: string];

/** An in-memory source: points (sorted here) plus range deletions [start, end, seq). */
function source(rank: number, points: Point[], dels: [string, string, number][] = []): MergeSource {
  const sorted = [...points].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : b[1] - a[1]));
  const cursor = new FragmentCursor(fragment(dels.map(([s, e, seq]) => ({ start: bytes(s), end: bytes(e), seq }))));
  let i = -1;
  return {
    rank,
    keyBuf: new Uint8Array(0),
    keyOff: 0,
    keyLen: 0,
    valBuf: new Uint8Array(0),
    valOff: 0,
    valLen: 0,
    seq: 0,
    kind: 0,
    next() {
      const p = sorted[++i];
      if (!p) return false;
      // A key inside a larger buffer, as the memtable's arena and the table iterator's scratch key.
      this.keyBuf = bytes('~' + p[0] + '~~~~');
      this.keyOff = 1;
      this.keyLen = p[0].length;
      this.seq = p[1];
      this.kind = p[2];
      return true;
    },
    loadValue() {
      this.valBuf = bytes(sorted[i]![3] ?? '');
      this.valOff = 0;
      this.valLen = this.valBuf.length;
    },
    tombstoneSeqAt: (k) => cursor.seqAt(k),
    close() {},
  };
}

function live(sources: MergeSource[], end?: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of new MergeIterator(sources, end === undefined ? undefined : bytes(end))) out[text(e.key)] = text(e.value);
  return out;
}

describe('merging iterator', () => {
  it('newest sequence number wins across sources; DEL and SINGLEDEL delete; SETWITHDEL is a SET', () => {
    const mem = source(0, [
      ['a', 10, K.SET, 'a10'],
      ['b', 11, K.DEL],
      ['d', 12, K.SINGLEDEL],
    ]);
    const l0 = source(1, [
      ['a', 5, K.SET, 'a5'],
      ['b', 6, K.SET, 'b6'],
      ['c', 7, K.SETWITHDEL, 'c7'],
      ['d', 3, K.SET, 'd3'],
    ]);
    const l6 = source(2, [
      ['a', 0, K.SET, 'a0'],
      ['e', 0, K.SET, 'e0'],
      ['c', 0, K.SET, 'c0'],
    ]);
    expect(live([mem, l0, l6])).toStrictEqual({ a: 'a10', c: 'c7', e: 'e0' });
  });

  it('a range deletion removes strictly older points only, in any source', () => {
    const mem = source(0, [['k2', 20, K.SET, 'new']], [['k1', 'k4', 15]]);
    const l6 = source(1, [
      ['k0', 0, K.SET, 'x'],
      ['k1', 0, K.SET, 'x'],
      ['k2', 0, K.SET, 'x'],
      ['k3', 16, K.SET, 'survives'],
      ['k4', 0, K.SET, 'end-exclusive'],
    ]);
    expect(live([mem, l6])).toStrictEqual({ k0: 'x', k2: 'new', k3: 'survives', k4: 'end-exclusive' });
  });

  it('overlapping, unsorted tombstones are applied independently', () => {
    const frags = fragment([
      { start: bytes('m'), end: bytes('z'), seq: 3 },
      { start: bytes('a'), end: bytes('p'), seq: 9 },
      { start: bytes('c'), end: bytes('d'), seq: 1 },
    ]);
    expect(frags.map((f) => [text(f.start), text(f.end), f.seq])).toStrictEqual([
      ['a', 'p', 9],
      ['p', 'z', 3],
    ]);
    const c = new FragmentCursor(frags);
    expect([c.seqAt(bytes('0')), c.seqAt(bytes('c')), c.seqAt(bytes('pa')), c.seqAt(bytes('z'))]).toStrictEqual([-1, 9, 3, -1]);
  });

  it('clips tombstones to bounds', () => {
    const frags = fragment([{ start: bytes('a'), end: bytes('z'), seq: 5 }], { lower: bytes('f'), upperExclusive: bytes('g\u0000') });
    expect(frags.map((f) => [text(f.start), text(f.end)])).toStrictEqual([['f', 'g\u0000']]);
  });

  it('equal sequence numbers go to the newer (lower-rank) source', () => {
    expect(live([source(1, [['a', 0, K.SET, 'deep']]), source(0, [['a', 0, K.SET, 'shallow']])])).toStrictEqual({ a: 'shallow' });
  });

  it('stops at the exclusive end and closes sources on break', () => {
    let closed = 0;
    const s = source(0, [
      ['a', 1, K.SET, '1'],
      ['b', 1, K.SET, '2'],
      ['c', 1, K.SET, '3'],
    ]);
    s.close = () => void closed++;
    expect(live([s], 'c')).toStrictEqual({ a: '1', b: '2' });
    expect(closed).toBeGreaterThan(0);
    const it2 = new MergeIterator(
      [
        source(0, [
          ['a', 1, K.SET, '1'],
          ['b', 1, K.SET, '2'],
        ]),
      ],
      undefined,
    );
    for (const e of it2) {
      expect(text(e.key)).toBe('a');
      break;
    }
    expect(it2.next().done).toBe(true);
  });

  it('refuses a live MERGE entry', () => {
    expect(() => live([source(0, [['m', 3, K.MERGE, 'x']])])).toThrow(/MERGE entry m#3,MERGE is live/);
    expect(
      live([
        source(0, [
          ['m', 4, K.DEL],
          ['m', 3, K.MERGE, 'x'],
        ]),
      ]),
    ).toStrictEqual({});
  });
});

/**
 * A source like the real ones: its key lives in one scratch buffer that the next
 * step overwrites (so a merge that reads a key after advancing sees garbage), and
 * it may track same-key runs and offer key views, as tables and the memtable do.
 */
function scratchSource(rank: number, points: Point[], dels: [string, string, number][], tracks: boolean, views: boolean): MergeSource {
  const sorted = [...points].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : b[1] - a[1]));
  const cursor = new FragmentCursor(fragment(dels.map(([s, e, seq]) => ({ start: bytes(s), end: bytes(e), seq }))));
  const scratch = new Uint8Array(64);
  const valScratch = new Uint8Array(64);
  let i = -1;
  const src: MergeSource = {
    rank,
    keyBuf: scratch,
    keyOff: 3,
    keyLen: 0,
    valBuf: valScratch,
    valOff: 0,
    valLen: 0,
    seq: 0,
    kind: 0,
    tracksSameKey: tracks,
    next() {
      const prev = sorted[i];
      const p = sorted[++i];
      scratch.fill(0xff);
      if (!p) return false;
      scratch.set(bytes(p[0]), 3);
      this.keyLen = p[0].length;
      this.seq = p[1];
      this.kind = p[2];
      this.sameAsPrev = tracks && prev !== undefined ? prev[0] === p[0] : undefined;
      if (tracks) {
        // A lower bound of the bytes shared with the previous key (what a block's shared prefix gives), sometimes exact.
        let lcp = 0;
        while (prev && lcp < p[0].length && lcp < prev[0].length && p[0][lcp] === prev[0][lcp]) lcp++;
        this.sharedPrefix = lcp - ((p[1] * 7) % 3 === 0 ? 0 : p[1] % (lcp + 1));
      }
      return true;
    },
    loadValue() {
      valScratch.set(bytes(sorted[i]![3] ?? ''));
      this.valLen = (sorted[i]![3] ?? '').length;
    },
    tombstoneSeqAt: (k) => cursor.seqAt(k),
    hasTombstones: dels.length > 0 ? undefined : false,
    close() {},
  };
  if (views) src.keyView = () => scratch.subarray(3, 3 + src.keyLen);
  return src;
}

describe('merging iterator against a model', () => {
  it('random sources (shared keys, deletions, range deletions, scratch keys) give what a brute-force model gives', () => {
    let state = 12345;
    const rnd = (n: number): number => {
      state = (state * 1103515245 + 12345) >>> 0;
      return (state >>> 8) % n;
    };
    const keyOf = (): string => ['a', 'ab', 'abc', 'b', 'ba', 'c', 'ca', 'cab', 'd', 'e'][rnd(10)]! + (rnd(3) === 0 ? 'x' : '');
    for (let round = 0; round < 300; round++) {
      let seq = 1;
      const all: { rank: number; p: Point }[] = [];
      const allDels: [string, string, number][] = [];
      const sources: MergeSource[] = [];
      const nSources = 1 + rnd(4);
      for (let r = 0; r < nSources; r++) {
        const pts: Point[] = [];
        for (let k = rnd(12); k > 0; k--) {
          const kinds = [K.SET, K.SET, K.SETWITHDEL, K.DEL, K.SINGLEDEL];
          const p: Point = [keyOf(), seq++, kinds[rnd(kinds.length)]!, `v${round}.${r}.${k}`];
          pts.push(p);
          all.push({ rank: r, p });
        }
        const dels: [string, string, number][] = [];
        if (rnd(4) === 0) {
          const [x, y] = [keyOf(), keyOf()].sort();
          if (x! < y!) dels.push([x!, y!, seq++]);
        }
        allDels.push(...dels);
        sources.push(scratchSource(r, pts, dels, rnd(2) === 0, rnd(2) === 0));
      }
      const expected: Record<string, string> = {};
      for (const key of new Set(all.map((e) => e.p[0]))) {
        const newest = all.filter((e) => e.p[0] === key).sort((a, b) => b.p[1] - a.p[1] || a.rank - b.rank)[0]!.p;
        const covered = allDels.some(([s, e, dseq]) => s <= key && key < e && dseq > newest[1]);
        if (!covered && (newest[2] === K.SET || newest[2] === K.SETWITHDEL)) expected[key] = newest[3]!;
      }
      const got: [string, string][] = [];
      for (const e of new MergeIterator(sources, undefined)) got.push([text(e.key), text(e.value)]);
      expect(Object.fromEntries(got), `round ${round}`).toStrictEqual(expected);
      expect(
        got.map(([k]) => k),
        `round ${round}: key order`,
      ).toStrictEqual(Object.keys(expected).sort());
    }
  });
});
