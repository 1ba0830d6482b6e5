import { describe, expect, it } from 'vitest';
import { ClientMsgNos } from './client-msg-nos.ts';

describe('ClientMsgNos', () => {
  it('finds a number a sender used before, keeps senders apart, forgets on clear', () => {
    const c = new ClientMsgNos();
    expect(c.addOrGet('u1', 'n1', 1)).toBeUndefined();
    expect(c.addOrGet('u2', 'n1', 2)).toBeUndefined(); // another sender, same number
    expect(c.addOrGet('u3', 'n1', 3)).toBeUndefined();
    expect(c.addOrGet('u1', 'n2', 4)).toBeUndefined();
    expect(c.addOrGet('u1', 'n1', 5)).toBe(1);
    expect(c.addOrGet('u2', 'n1', 6)).toBe(2);
    expect(c.addOrGet('u3', 'n1', 7)).toBe(3);
    expect(c.addOrGet('u1', 'n2', 8)).toBe(4);
    // a joined key would confuse these
    expect(c.addOrGet('a\u0000b', 'c', 9)).toBeUndefined();
    expect(c.addOrGet('a', 'b\u0000c', 10)).toBeUndefined();
    c.clear();
    expect(c.addOrGet('u1', 'n1', 11)).toBeUndefined();
    expect(c.addOrGet('u1', 'n1', 12)).toBe(11);
  });
});
