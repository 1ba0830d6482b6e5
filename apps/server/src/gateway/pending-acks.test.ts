import { describe, expect, it } from 'vitest';
import { Delivery } from '../messaging/delivery.ts';
import { PendingAcks, type PendingRecv } from './pending-acks.ts';

const delivery = (id: number): Delivery =>
  new Delivery(BigInt(id), id, `c${id}`, 'u', 'g', 2, 0, new Uint8Array(), 0, '', 0, false, false, false);

/**
 * The structure PendingAcks replaced: a Map by decimal id, in insertion
 * order, where setting an existing id keeps its place. Each operation is
 * applied to both, and both must list the same entries in the same order.
 */
class MapModel {
  readonly map = new Map<string, { delivery: Delivery; due: number; tries: number }>();
  add(d: Delivery, due: number): void {
    this.map.set(d.messageIdText, { delivery: d, due, tries: 0 });
  }
  remove(id: string): void {
    this.map.delete(id);
  }
  requeueOldest(): void {
    const [id, e] = this.map.entries().next().value!;
    this.map.delete(id);
    this.map.set(id, e);
  }
  list(): string[] {
    return [...this.map.values()].map((e) => `${e.delivery.messageIdText}@${e.due}`);
  }
}

/** Every entry of `q` in order, as the model lists them (by draining a copy of its order through requeueOldest). */
function listOf(q: PendingAcks): string[] {
  const out: string[] = [];
  for (let i = 0; i < q.size; i++) {
    const e = q.oldest()!;
    out.push(`${e.delivery!.messageIdText}@${e.due}`);
    q.requeueOldest();
  }
  return out;
}

/** A small deterministic generator (the same run every time). */
function rng(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return x / 2 ** 31;
  };
}

describe('PendingAcks', () => {
  it('keeps the entries and the order a Map by id kept, through any mix of adds, acks and resends', () => {
    for (const [seed, span] of [
      [1, 6],
      [2, 20],
      [3, 300],
    ] as const) {
      const random = rng(seed);
      const q = new PendingAcks();
      const model = new MapModel();
      let due = 0;
      for (let step = 0; step < 5000; step++) {
        const r = random();
        const id = 1 + Math.floor(random() * span);
        if (r < 0.45) {
          const d = delivery(id);
          due++;
          const again = q.find(d.messageIdText);
          if (again) {
            again.delivery = d;
            again.due = due;
            again.tries = 0;
          } else {
            q.push(d, due);
          }
          model.add(d, due);
        } else if (r < 0.6 && q.size > 0) {
          // An in-order ack: the oldest.
          const oldest = q.oldest()!;
          model.remove(oldest.delivery!.messageIdText);
          q.remove(oldest);
        } else if (r < 0.85) {
          const e: PendingRecv | undefined = q.find(String(id));
          expect(e !== undefined).toBe(model.map.has(String(id)));
          if (e) q.remove(e);
          model.remove(String(id));
        } else if (r < 0.97 && q.size > 0) {
          q.requeueOldest();
          model.requeueOldest();
        } else if (r >= 0.995) {
          q.clear();
          model.map.clear();
        }
        expect(q.size).toBe(model.map.size);
        if (step % 50 === 0) expect(listOf(q)).toEqual(model.list());
      }
      expect(listOf(q)).toEqual(model.list());
    }
  });

  it('finds an entry by id however long the queue grows, and empties whole', () => {
    const q = new PendingAcks();
    for (let id = 1; id <= 2000; id++) q.push(delivery(id), id);
    expect(q.size).toBe(2000);
    for (let id = 2000; id >= 1; id -= 2) q.remove(q.find(String(id))!);
    expect(q.size).toBe(1000);
    expect(q.find('2000')).toBeUndefined();
    expect(q.find('1999')?.due).toBe(1999);
    expect(q.oldest()?.delivery?.messageIdText).toBe('1');
    for (let id = 1; id <= 1999; id += 2) q.remove(q.oldest()!);
    expect([q.size, q.oldest()]).toEqual([0, undefined]);
    q.push(delivery(7), 7);
    expect(q.find('7')?.due).toBe(7);
  });
});
