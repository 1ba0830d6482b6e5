import { describe, expect, it } from 'vitest';
import { crc32, normalizePersonChannel, personChannelId, personPeer } from './channel.ts';

describe('crc32', () => {
  it('matches the IEEE check value', () => {
    expect(crc32('123456789')).toBe(0xcbf43926);
    expect(crc32('')).toBe(0);
  });

  it('hashes the UTF-8 bytes TextEncoder writes, lone surrogates included', () => {
    // Bit by bit over TextEncoder's bytes: an independent reference.
    const reference = (text: string): number => {
      let crc = 0xffffffff;
      for (const byte of new TextEncoder().encode(text)) {
        crc ^= byte;
        for (let k = 0; k < 8; k++) crc = crc & 1 ? 0xedb88320 ^ (crc >>> 1) : crc >>> 1;
      }
      return (crc ^ 0xffffffff) >>> 0;
    };
    const fixed = ['u1', 'é', 'ß中文', '\u07ff\u0800\uffff', '😀x', 'a\ud800', '\ud800b', '\udc00', '\ud83d\ud83d\ude00', '\ud800\ud800'];
    for (const text of fixed) expect(crc32(text)).toBe(reference(text));
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let n = 0; n < 500; n++) {
      const units = Array.from(
        { length: next() % 12 },
        () => [0x41 + (next() % 26), 0x80 + (next() % 0x780), next() % 0x10000, 0xd800 + (next() % 0x800)][next() % 4]!,
      );
      const text = String.fromCharCode(...units);
      expect(crc32(text)).toBe(reference(text));
    }
  });
});

describe('personChannelId', () => {
  it('is symmetric and puts the larger hash first', () => {
    const id = personChannelId('alice', 'bob');
    expect(personChannelId('bob', 'alice')).toBe(id);
    const [first] = id.split('@');
    const other = first === 'alice' ? 'bob' : 'alice';
    expect(crc32(first!)).toBeGreaterThan(crc32(other));
  });

  it('normalizes a bare peer id and a two-part id naming the user', () => {
    const id = personChannelId('u1', 'u2');
    expect(normalizePersonChannel('u1', 'u2')).toBe(id);
    expect(normalizePersonChannel('u1', 'u1@u2')).toBe(id);
    expect(normalizePersonChannel('u1', 'u2@u1')).toBe(id);
  });

  it('rejects ids that do not name the user or have empty parts', () => {
    expect(normalizePersonChannel('u1', 'u2@u3')).toBeUndefined();
    expect(normalizePersonChannel('u1', '@u1')).toBeUndefined();
    expect(normalizePersonChannel('u1', 'a@b@c')).toBeUndefined();
    expect(normalizePersonChannel('u1', '')).toBeUndefined();
  });

  it('shows each participant the other one as the channel', () => {
    const id = personChannelId('u1', 'u2');
    expect(personPeer('u1', id)).toBe('u2');
    expect(personPeer('u2', id)).toBe('u1');
    expect(personPeer('u3', id)).toBe(id);
  });
});
