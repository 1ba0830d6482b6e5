import { describe, expect, it } from 'vitest';
import { Ledger, PhaseLedgers, decodeBody, encodeBody, type LedgerVerdict } from '../src/ledger.ts';
import { Samples } from '../src/stats.ts';

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

  it('records bodies from bytes exactly as from text: loss, duplicates, order, foreign, latency', () => {
    // The same deliveries fed to one ledger as text and to another as bytes inside a larger buffer.
    const bodies: string[] = [];
    const text = new Ledger();
    const bytes = new Ledger();
    for (const l of [text, bytes]) {
      l.expect('s3:é', ['r']);
      l.expect('other', ['r']);
    }
    for (let n = 0; n < 300; n++) bodies.push(encodeBody('s3:é', n, 1000 + n / 8, 64));
    for (const l of [text, bytes]) {
      for (let n = 0; n < 300; n++) l.next('s3:é');
      l.next('other');
      l.next('other');
    }
    const deliveries = [
      ...bodies.slice(0, 100),
      bodies[50]!, // duplicate
      encodeBody('other', 0, 2000.5), // another stream: the cached one must not be reused
      ...bodies.slice(150, 300),
      bodies[120]!, // late: out of order
      encodeBody('other', 1, 2001),
      encodeBody('nobody', 0, 1), // no such stream at r
      's3:é|12', // too few fields
      's3:é|1x|5.0|', // not a number
      's3:é||5.0|', // empty number
      's3:é|3|5.0.1|', // two points
      's3:é|3||', // empty send time
      's3:é|3|.|', // a point alone
      `s3:é|${2 ** 31}|1.0|`, // beyond 2^31 - 1
    ];
    const r = bytes.recipient('r');
    for (const d of deliveries) {
      text.receive('r', d, 5000);
      const framed = Buffer.concat([Buffer.from('prefix|'), Buffer.from(d), Buffer.from('|suffix')]);
      r.bytes(framed, 7, 7 + Buffer.byteLength(d), 5000);
    }
    expect(bytes.verdict()).toEqual(text.verdict());
    expect(bytes.verdict()).toEqual({ expected: 302, received: 253, lost: 49, duplicates: 1, outOfOrder: 1, foreign: 8 });
    expect(bytes.recordedDeliveries).toBe(deliveries.length);
    expect(bytes.latency.percentile(0)).toBeCloseTo(text.latency.percentile(0), 9);
    expect(bytes.latency.percentile(50)).toBeCloseTo(text.latency.percentile(50), 9);
    expect(bytes.latency.percentile(100)).toBeCloseTo(5000 - 1000, 9);
  });

  it('routes deliveries to their phase from bytes exactly as from text (a late one of a previous phase included)', () => {
    // Two phase sets fed the same deliveries, one as text, one as bytes through a recipient per uid.
    const run = (feed: (p: PhaseLedgers, uid: string, body: string) => void): LedgerVerdict[] => {
      const phases = new PhaseLedgers();
      const warm = phases.open('warm');
      warm.expect('s2:warm:0', ['a', 'b']);
      const w = [0, 1, 2].map((n) => encodeBody('s2:warm:0', warm.next('s2:warm:0'), 100 + n));
      for (const body of w.slice(0, 2)) for (const uid of ['a', 'b']) feed(phases, uid, body);
      const p0 = phases.open('p0');
      p0.expect('s2:p0:0', ['a', 'b']);
      const bodies = [0, 1, 2, 3].map((n) => encodeBody('s2:p0:0', p0.next('s2:p0:0'), 200 + n, 64));
      feed(phases, 'a', w[2]!); // late: counted in warm, not as foreign in p0
      for (const body of bodies) feed(phases, 'a', body);
      feed(phases, 'b', bodies[1]!);
      feed(phases, 'b', bodies[0]!); // out of order
      feed(phases, 'b', bodies[1]!); // duplicate
      feed(phases, 'b', encodeBody('s2:p0:9', 0, 1)); // a stream b does not expect
      feed(phases, 'b', encodeBody('s2:nophase:0', 0, 1)); // an unknown phase: foreign in the newest
      feed(phases, 'a', 'undecryptable');
      return [warm.verdict(), p0.verdict()];
    };
    const text = run((p, uid, body) => p.receive(uid, body));
    const recipients = new Map<string, ReturnType<PhaseLedgers['recipient']>>();
    const bytes = run((p, uid, body) => {
      if (!recipients.has(uid)) recipients.set(uid, p.recipient(uid));
      const framed = Buffer.concat([Buffer.from('xx'), Buffer.from(body), Buffer.from('yy')]);
      recipients.get(uid)!.bytes(framed, 2, 2 + Buffer.byteLength(body));
    });
    expect(bytes).toEqual(text);
    expect(text).toEqual([
      { expected: 6, received: 5, lost: 1, duplicates: 0, outOfOrder: 0, foreign: 0 },
      { expected: 8, received: 6, lost: 2, duplicates: 1, outOfOrder: 1, foreign: 3 },
    ]);
  });

  it('keeps every sample and its percentiles as samples grow past their first allocation', () => {
    const s = new Samples();
    expect(s.percentile(50)).toBeNaN();
    for (let i = 1000; i >= 1; i--) s.add(i / 4);
    expect(s.count).toBe(1000);
    expect(s.percentile(0)).toBe(0.25);
    expect(s.percentile(50)).toBe(125);
    expect(s.percentile(100)).toBe(250);
  });
});
