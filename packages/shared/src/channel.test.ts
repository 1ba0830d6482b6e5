import { describe, expect, it } from 'vitest';
import { crc32, normalizePersonChannel, personChannelId, personPeer } from './channel.ts';

describe('crc32', () => {
  it('matches the IEEE check value', () => {
    expect(crc32('123456789')).toBe(0xcbf43926);
    expect(crc32('')).toBe(0);
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
