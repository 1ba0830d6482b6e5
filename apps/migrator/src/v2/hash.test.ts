import { describe, expect, it } from 'vitest';
import { channelHash, channelShard, fnv1_32, fnv1a64Hex, stringShard, u64Dec } from './hash.ts';

/** Straightforward BigInt versions of the hashes, to check the limb arithmetic against. */
const utf8 = new TextEncoder();
function refFnv1a64(text: string): string {
  let h = 0xcbf29ce484222325n;
  for (const b of utf8.encode(text)) h = ((h ^ BigInt(b)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return h.toString(16).padStart(16, '0');
}
function refFnv1_32(text: string): number {
  let h = 0x811c9dc5n;
  for (const b of utf8.encode(text)) h = ((h * 0x01000193n) & 0xffffffffn) ^ BigInt(b);
  return Number(h);
}

/** A deterministic pseudo-random sequence (tests must not depend on chance). */
function* numbers(seed: number): Generator<number> {
  let x = seed;
  for (;;) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    yield x;
  }
}

const samples = [
  '',
  'a',
  'u11378',
  '1741986930@u11378',
  'grp-alpha-01____cmd',
  '群聊-01',
  'emoji 😀',
  'lone \ud800 surrogate',
  '\u007f\u0080',
  'x'.repeat(300),
];

describe('v2 hashes', () => {
  it('FNV-1a 64 and FNV-1 32 match the BigInt definitions for ASCII, non-ASCII and malformed text', () => {
    for (const s of samples) {
      expect(fnv1a64Hex(s), s).toBe(refFnv1a64(s));
      expect(fnv1_32(s), s).toBe(refFnv1_32(s));
    }
    expect(fnv1a64Hex('')).toBe('cbf29ce484222325');
    expect(fnv1_32('')).toBe(0x811c9dc5);
    expect(channelHash('u1', 1)).toBe(refFnv1a64('u1-1'));
  });

  it('shards by u64 and u32 modulo', () => {
    const rnd = numbers(7);
    for (let i = 0; i < 2000; i++) {
      const hex = [0, 1, 2, 3].map(() => (rnd.next().value! & 0xffff).toString(16).padStart(4, '0')).join('');
      const shards = 1 + (rnd.next().value! % 64);
      expect(channelShard(hex, shards), `${hex} % ${shards}`).toBe(shards <= 1 ? 0 : Number(BigInt(`0x${hex}`) % BigInt(shards)));
    }
    expect(channelShard('ffffffffffffffff', 8)).toBe(7);
    expect(stringShard('u11378', 8)).toBe(refFnv1_32('u11378') % 8);
  });

  it('prints big-endian u64 values as exact decimals on both sides of 2^53', () => {
    const rnd = numbers(11);
    const bytes = new Uint8Array(10);
    const view = new DataView(bytes.buffer);
    const cases = [
      0n,
      1n,
      2n ** 53n - 1n,
      2n ** 53n,
      2n ** 53n + 1n,
      10n ** 19n,
      2n ** 64n - 1n,
      2028498040494493696n,
      1772451001425858567n,
    ];
    for (let i = 0; i < 2000; i++) cases.push((BigInt(rnd.next().value!) << 32n) | BigInt(rnd.next().value!));
    for (let k = 1n; k < 1845n; k += 7n) cases.push(k * 10n ** 16n - 1n, k * 10n ** 16n, (k * 10n ** 16n) / 3n);
    for (let k = 900719n; k < 1844674407n; k = k * 3n + 1n) for (const d of [-1n, 0n, 1n]) cases.push(k * 10n ** 10n + d);
    for (const v of cases) {
      view.setBigUint64(1, v);
      expect(u64Dec(bytes, 1)).toBe(v.toString());
    }
  });

  it('places keys in v2 slots as the spec vectors say', async () => {
    const { slotOf } = await import('./hash.ts');
    expect([slotOf('u1', 64), slotOf('u2', 64), slotOf('group1', 64), slotOf('____system', 64)]).toEqual([54, 12, 12, 8]);
  });
});
