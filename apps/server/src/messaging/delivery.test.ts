import { describe, expect, it } from 'vitest';
import { Delivery } from './delivery.ts';

const delivery = (id: bigint): Delivery => new Delivery(id, 1, 'c', 'u', 'g', 2, 0, new Uint8Array(), 0, '', 0, false, false, false);

/** `id` as WKProto carries it: a big-endian int64 at offset 3 of a buffer with bytes around it. */
function wire(id: bigint): Buffer {
  const b = Buffer.alloc(14, 0xee);
  b.writeBigInt64BE(BigInt.asIntN(64, id), 3);
  return b;
}

describe('Delivery.idEqualsInt64BE', () => {
  const I64_MAX = 2n ** 63n - 1n;
  const ids = [
    1n,
    2n,
    255n,
    256n,
    2n ** 31n,
    2n ** 32n - 1n,
    2n ** 32n,
    2n ** 32n + 1n,
    2n ** 53n + 1n,
    7_234_567_890_123_456_789n,
    I64_MAX,
  ];

  it('is true exactly when the bytes read as int64 are the id, for every positive int64 id', () => {
    const probes = [
      ...ids,
      0n,
      -1n,
      -(2n ** 63n),
      ...ids.map((id) => id ^ 1n),
      ...ids.map((id) => id ^ (1n << 40n)),
      ...ids.map((id) => -id),
    ];
    for (const id of ids) {
      const d = delivery(id);
      for (const p of probes) expect(d.idEqualsInt64BE(wire(p), 3), `${id} vs ${p}`).toBe(BigInt.asIntN(64, p) === id);
    }
  });

  it('matches nothing for an id that is not a positive int64 (as a RECVACK of 0, a negative or a wider id acks nothing)', () => {
    for (const id of [0n, -1n, -5n, 2n ** 63n, 2n ** 64n + 5n]) {
      const d = delivery(id);
      for (const p of [id, 0n, -1n, -5n, 5n, BigInt.asIntN(64, id)]) expect(d.idEqualsInt64BE(wire(p), 3), `${id} vs ${p}`).toBe(false);
    }
  });
});
