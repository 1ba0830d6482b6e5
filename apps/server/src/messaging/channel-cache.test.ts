import { ChannelType } from '@parley/shared';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openMemoryStore, type Store } from '@parley/store';
import { ChannelCache } from './channel-cache.ts';

let store: Store;
beforeEach(async () => {
  store = await openMemoryStore();
});
afterEach(() => store.close());

describe('ChannelCache bounds', () => {
  it('keeps the characters of its keys within maxKeyChars, the oldest going first, and counts every removal in its generation', async () => {
    const cache = new ChannelCache(store.channels, store.memberships, 1000, 1000);
    const id = (i: number) => `${String(i).padStart(3, '0')}${'g'.repeat(97)}`;
    for (let i = 0; i < 30; i++) await cache.get(id(i), ChannelType.Group);
    // Each key is `2:` and 100 characters: nine fit in 1,000.
    expect(cache.held).toEqual({ count: 9, chars: 9 * 102 });
    expect(cache.peek(id(29), ChannelType.Group)).toBeDefined();
    expect(cache.peek(id(20), ChannelType.Group)).toBeUndefined();
    expect(cache.generation).toBe(21);
    cache.invalidate(id(29), ChannelType.Group);
    expect(cache.held).toEqual({ count: 8, chars: 8 * 102 });
    expect(cache.peek(id(29), ChannelType.Group)).toBeUndefined();
    expect(cache.generation).toBe(22);
    // A key longer than the bound alone is still kept (the newest entry is never evicted by its own insert).
    await cache.get('x'.repeat(5000), ChannelType.Group);
    expect(cache.held).toEqual({ count: 1, chars: 5002 });
  });

  it('keeps at most maxEntries entries', async () => {
    const cache = new ChannelCache(store.channels, store.memberships, 5);
    for (let i = 0; i < 12; i++) await cache.get(`c${i}`, ChannelType.Group);
    expect(cache.held.count).toBe(5);
    expect(cache.peek('c11', ChannelType.Group)).toBeDefined();
    expect(cache.peek('c6', ChannelType.Group)).toBeUndefined();
  });
});
