import { describe, expect, it } from 'vitest';
import { BlockIter } from '../src/block-iter.ts';

/** An internal key: user key + trailer (seq << 8 | kind, little endian). */
function ikey(user: string, seq: number, kind: number): Uint8Array {
  const out = new Uint8Array(user.length + 8);
  out.set(Buffer.from(user, 'latin1'));
  const t = new DataView(out.buffer);
  t.setUint32(user.length, ((seq & 0xffffff) << 8) | kind, true);
  t.setUint32(user.length + 4, Math.floor(seq / 0x1000000), true);
  return out;
}

/** A block with prefix-compressed keys (a restart every `interval` entries), as Pebble writes them. */
function block(entries: [Uint8Array, string][], interval = 16): Uint8Array {
  const bytes: number[] = [];
  const restarts: number[] = [];
  let prev: Uint8Array = new Uint8Array(0);
  entries.forEach(([key, value], i) => {
    let shared = 0;
    if (i % interval === 0) restarts.push(bytes.length);
    else while (shared < prev.length && shared < key.length && prev[shared] === key[shared]) shared++;
    bytes.push(shared, key.length - shared, value.length, ...key.subarray(shared), ...Buffer.from(value));
    prev = key;
  });
  for (const r of [...restarts, restarts.length]) bytes.push(r & 0xff, (r >> 8) & 0xff, 0, 0);
  return Uint8Array.from(bytes);
}

/** Every entry as the table iterator sees it: user key, seq and kind from the trailer wherever it lies, value, order facts. */
function read(it: BlockIter): [string, number, number, string, number, number][] {
  const out: [string, number, number, string, number, number][] = [];
  while (it.next()) {
    const t = it.trailerBuf;
    const o = it.trailerOff;
    const seq = (t[o + 1]! | (t[o + 2]! << 8) | (t[o + 3]! << 16)) + (t[o + 4]! + t[o + 5]! * 0x100) * 0x1000000;
    const user = Buffer.from(it.key.subarray(0, it.keyLen - 8)).toString('latin1');
    out.push([user, seq, t[o]!, Buffer.from(it.value()).toString(), Math.sign(it.prevUserCmp), it.userLcp]);
  }
  return out;
}

describe('block iterator', () => {
  it('data blocks: trailers read in place or, when the next key shares them, from the scratch key', () => {
    // Versions of one user key share the user key and the kind byte (and more) of the previous trailer.
    const entries: [Uint8Array, string][] = [
      [ikey('apple', 0x10305, 1), 'v1'],
      [ikey('apple', 0x10303, 1), 'v2'],
      [ikey('apple', 0x10302, 0), ''],
      [ikey('apple', 0x10301, 1), 'v4'],
      [ikey('apricot', 7, 1), 'v5'],
      [ikey('b', 0x123456789, 18), 'v6'],
    ];
    for (const interval of [16, 2, 1]) {
      const it = new BlockIter(block(entries, interval), 'mem', 0, true);
      expect(read(it), `restart interval ${interval}`).toStrictEqual([
        ['apple', 0x10305, 1, 'v1', -1, 0], // no previous key: sorts after "nothing"
        ['apple', 0x10303, 1, 'v2', 0, 5],
        ['apple', 0x10302, 0, '', 0, 5],
        ['apple', 0x10301, 1, 'v4', 0, 5],
        ['apricot', 7, 1, 'v5', -1, 2],
        ['b', 0x123456789, 18, 'v6', -1, 0],
      ]);
    }
  });

  it("a following block compares its first key with the previous block's last one", () => {
    const first = new BlockIter(
      block([
        [ikey('k1', 9, 1), 'a'],
        [ikey('k2', 8, 1), 'b'],
      ]),
      'mem',
      0,
      true,
    );
    while (first.next());
    const second = new BlockIter(
      block([
        [ikey('k2', 3, 1), 'c'],
        [ikey('k3', 2, 1), 'd'],
      ]),
      'mem',
      100,
      true,
      first,
    );
    expect(read(second)).toStrictEqual([
      ['k2', 3, 1, 'c', 0, 2],
      ['k3', 2, 1, 'd', -1, 1],
    ]);
  });

  it('other blocks keep whole internal keys in the scratch key', () => {
    const it = new BlockIter(
      block([
        [ikey('x', 5, 1), 'p'],
        [ikey('x', 4, 1), 'q'],
      ]),
      'mem',
      0,
    );
    const keys: string[] = [];
    while (it.next()) keys.push(Buffer.from(it.keyCopy()).toString('hex'));
    expect(keys).toStrictEqual([Buffer.from(ikey('x', 5, 1)).toString('hex'), Buffer.from(ikey('x', 4, 1)).toString('hex')]);
  });

  it('seekBefore starts at the last restart below the key, so no entry at or after it is skipped', () => {
    // Versions of "b" span restart points: a restart at a "b" entry must not be where a seek to "b" starts.
    const entries: [Uint8Array, string][] = [
      [ikey('a', 5, 1), 'a5'],
      [ikey('b', 9, 1), 'b9'],
      [ikey('b', 8, 1), 'b8'],
      [ikey('b', 7, 0), ''],
      [ikey('b', 6, 1), 'b6'],
      [ikey('ba', 4, 1), 'ba4'],
      [ikey('bb', 3, 1), 'bb3'],
      [ikey('c', 2, 1), 'c2'],
      [ikey('d', 1, 1), 'd1'],
    ];
    for (const interval of [1, 2, 3, 16]) {
      const all = read(new BlockIter(block(entries, interval), 'mem', 0, true));
      for (const target of ['', 'a', 'a\u0000', 'b', 'b\u0000', 'ba', 'bb', 'bc', 'c', 'd', 'e']) {
        const it = new BlockIter(block(entries, interval), 'mem', 0, true);
        it.seekBefore(Buffer.from(target, 'latin1'));
        const got = read(it).filter((e) => e[0] >= target);
        expect(
          got.map((e) => e.slice(0, 4)),
          `interval ${interval}, target ${JSON.stringify(target)}`,
        ).toStrictEqual(all.filter((e) => e[0] >= target).map((e) => e.slice(0, 4)));
      }
    }
    // With one entry per restart, a seek to "c" decodes from the last "bb" entry on.
    const it = new BlockIter(block(entries, 1), 'mem', 0, true);
    it.seekBefore(Buffer.from('c', 'latin1'));
    expect(read(it).map((e) => e[0])).toStrictEqual(['bb', 'c', 'd']);
  });

  it('seekBefore stays at the block start when a restart entry is malformed', () => {
    const b = block(
      [
        [ikey('a', 2, 1), 'x'],
        [ikey('b', 1, 1), 'y'],
      ],
      1,
    );
    // Point the second restart past the entries.
    b[b.length - 8] = 0xff;
    const it = new BlockIter(b, 'mem', 0, true);
    it.seekBefore(Buffer.from('b', 'latin1'));
    expect(it.next()).toBe(true);
    expect(Buffer.from(it.key.subarray(0, it.keyLen - 8)).toString('latin1')).toBe('a');
  });
});
