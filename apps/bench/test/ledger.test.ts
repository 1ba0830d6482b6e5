import { describe, expect, it } from 'vitest';
import { Ledger, decodeBody, encodeBody } from '../src/ledger.ts';

describe('the ledger on its own', () => {
  it('round-trips a body, padded to the requested size', () => {
    const body = encodeBody('s1:x:3', 7, 1234.5678, 64);
    expect(body).toHaveLength(64);
    expect(decodeBody(body)).toEqual({ stream: 's1:x:3', n: 7, sentAt: 1234.568 });
  });

  it('counts loss, duplicates, reordering and foreign bodies per recipient', () => {
    const ledger = new Ledger();
    ledger.expect('g', ['r1', 'r2']);
    const bodies = [0, 1, 2, 3].map(() => encodeBody('g', ledger.next('g'), performance.now()));
    for (const b of bodies) ledger.receive('r1', b);
    ledger.receive('r2', bodies[0]!);
    ledger.receive('r2', bodies[2]!);
    ledger.receive('r2', bodies[1]!); // late: out of order
    ledger.receive('r2', bodies[2]!); // again: duplicate
    ledger.receive('r3', bodies[0]!); // nobody expects r3 on g
    expect(ledger.verdict()).toEqual({ expected: 8, received: 7, lost: 1, duplicates: 1, outOfOrder: 1, foreign: 1 });
  });

  it('tracks hundreds of sequence numbers per recipient: late, repeated and foreign ones', () => {
    const ledger = new Ledger();
    ledger.expect('s', ['r']);
    const bodies = Array.from({ length: 500 }, () => encodeBody('s', ledger.next('s'), performance.now()));
    const order = [...bodies.keys()].filter((n) => n !== 100 && n !== 333);
    for (const n of order) ledger.receive('r', bodies[n]!);
    ledger.receive('r', bodies[100]!); // late
    for (const n of [0, 31, 32, 63, 64, 499, 100]) ledger.receive('r', bodies[n]!); // repeats
    ledger.receive('r', encodeBody('s', -1, 0));
    ledger.receive('r', encodeBody('s', 1.5, 0));
    ledger.receive('r', 'no separators');
    ledger.receive('r', encodeBody('t', 1, 0));
    expect(ledger.verdict()).toEqual({ expected: 500, received: 499, lost: 1, duplicates: 7, outOfOrder: 1, foreign: 4 });
  });
});
