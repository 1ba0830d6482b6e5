import { describe, expect, it } from 'vitest';
import { sortEntries } from '../src/key-sort.ts';

/** Builds an arena of keys and sorts it both ways: the radix sort and a plain comparison sort. */
function check(keys: Uint8Array[], seqs: number[]): void {
  const total = keys.reduce((n, k) => n + k.length, 0);
  const keyOff = new Int32Array(keys.length);
  const keyLen = new Int32Array(keys.length);
  let at = 7; // keys start at an offset, as batch keys do
  const arena = new Uint8Array(total + 7);
  keys.forEach((k, i) => {
    arena.set(k, at);
    keyOff[i] = at;
    keyLen[i] = k.length;
    at += k.length;
  });
  const order = sortEntries({ arena, keyOff, keyLen, seq: Float64Array.from(seqs), count: keys.length });
  const cmp = (a: number, b: number): number => Buffer.compare(keys[a]!, keys[b]!) || seqs[b]! - seqs[a]!;
  const expected = keys.map((_, i) => i).sort(cmp);
  expect(Array.from(order)).toStrictEqual(expected);
}

describe('memtable key sort', () => {
  it('orders by key bytes (a prefix first), then sequence number descending, for random key sets', () => {
    let state = 99;
    const rnd = (n: number): number => {
      state = (state * 1103515245 + 12345) >>> 0;
      return (state >>> 8) % n;
    };
    for (let round = 0; round < 60; round++) {
      const n = [0, 1, 2, 10, 30, 200, 2000][round % 7]!;
      const prefixLen = [0, 3, 12, 90][rnd(4)]!; // long shared prefixes push the radix sort deep
      const prefix = Uint8Array.from({ length: prefixLen }, () => rnd(3));
      const alphabet = 1 + rnd(4);
      const keys: Uint8Array[] = [];
      for (let i = 0; i < n; i++) {
        if (i > 0 && rnd(5) === 0) {
          keys.push(keys[rnd(i)]!.slice()); // the same key again (another version)
          continue;
        }
        const tail = Uint8Array.from({ length: rnd(6) }, () => (rnd(2) === 0 ? 0 : rnd(alphabet) * 85));
        const k = new Uint8Array(prefixLen + tail.length);
        k.set(prefix);
        k.set(tail, prefixLen);
        keys.push(k);
      }
      // Distinct sequence numbers in a random order (a WAL's are ascending, but the sort must not rely on it).
      const seqs = keys.map((_, i) => i + 1).sort(() => rnd(3) - 1);
      check(keys, seqs);
    }
  });

  it('keys nested in each other ("a", "aa", …, 8,000 deep) sort shortest first, without running out of stack', () => {
    const n = 8_000;
    const total = (n * (n + 1)) / 2;
    const arena = new Uint8Array(total).fill(0x61);
    const keyOff = new Int32Array(n);
    const keyLen = new Int32Array(n);
    for (let i = 0, at = 0; i < n; at += n - i, i++) {
      keyOff[i] = at;
      keyLen[i] = n - i; // longest first
    }
    const order = sortEntries({ arena, keyOff, keyLen, seq: new Float64Array(n).fill(1), count: n });
    expect(Array.from(order)).toStrictEqual(Array.from({ length: n }, (_, i) => n - 1 - i));
  });
});
