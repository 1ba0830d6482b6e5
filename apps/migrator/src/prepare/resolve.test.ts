import { describe, expect, it } from 'vitest';
import { ConversationKeys } from './conversation-keys.ts';

describe('ConversationKeys', () => {
  it('finds the row already at a (uid, channel type, channel id) place, and only there', () => {
    const k = new ConversationKeys();
    expect(k.addOrGet('u1', 2, 'g1', '10')).toBeUndefined();
    expect(k.addOrGet('u1', 1, 'g1', '11')).toBeUndefined(); // same id, another channel type
    expect(k.addOrGet('u1', 3, 'g1', '12')).toBeUndefined();
    expect(k.addOrGet('u2', 2, 'g1', '13')).toBeUndefined(); // another uid
    expect(k.addOrGet('u1', 2, 'g2', '14')).toBeUndefined(); // another channel
    expect(k.addOrGet('u1', 2, 'g1', '20')).toBe('10');
    expect(k.addOrGet('u1', 1, 'g1', '21')).toBe('11');
    expect(k.addOrGet('u1', 3, 'g1', '22')).toBe('12');
    expect(k.addOrGet('u2', 2, 'g1', '23')).toBe('13');
    // strings that a joined key would confuse stay apart
    expect(k.addOrGet('a\u00002', 2, 'b', '30')).toBeUndefined();
    expect(k.addOrGet('a', 2, '2\u0000b', '31')).toBeUndefined();
  });
});
