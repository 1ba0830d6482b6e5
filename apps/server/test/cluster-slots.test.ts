/**
 * Slot ownership over the real PostgreSQL leases (a schema of its own,
 * dropped after): three slot managers share 12 slots, hand slots over when a
 * node joins, take over the slots of a node that stops renewing once its
 * leases run out, and the store fences the stale owner's appends off.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresStore, StaleEpochError, type Store } from '@parley/store';
import { createTestSchema, postgresReachable, type TestSchema } from '@parley/store/testing';
import { SlotManager, type LeaseStore } from '../src/cluster/slot-manager.ts';
import { SlotTable } from '../src/cluster/slots.ts';
import { createLogger } from '../src/log.ts';
import { waitFor } from '../../../test-support/http.ts';

const pgUp = await postgresReachable();
const log = createLogger('silent');
const TTL = 1500;

describe.skipIf(!pgUp)('slot leases between nodes', () => {
  let schema: TestSchema;
  let store: Store;

  beforeAll(async () => {
    schema = createTestSchema('parley_slots');
    store = await openPostgresStore({ url: schema.url, sync: 'full', poolSize: 4, mustExist: false, log });
  });
  afterAll(async () => {
    await store?.close();
    await schema?.drop();
  });

  it('shares slots, hands them to a joining node, and takes over a silent node’s slots after its leases run out', async () => {
    const table = new SlotTable(12, 256);
    const live = new Map<number, number>([[1, performance.now() - 10_000]]);
    const nodes = { liveIds: () => [...live.keys()].sort(), liveForMs: (id: number) => performance.now() - (live.get(id) ?? Infinity) };
    let partitioned = false;
    const forgotten: Array<[number, number]> = [];
    const manager = (id: number, leases: LeaseStore) =>
      new SlotManager(
        leases,
        table,
        id,
        nodes,
        TTL,
        { changed() {}, forgetSlot: (slot) => forgotten.push([id, slot]), drain: async () => {} },
        log,
      );
    const m1 = manager(1, store.leases);
    const m2 = manager(2, {
      ...store.leases,
      acquire: (...a) => store.leases.acquire(...a),
      renew: async (...a) => {
        if (partitioned) throw new Error('connection to the store lost');
        return store.leases.renew(...a);
      },
      release: (...a) => store.leases.release(...a),
      list: () => store.leases.list(),
    });
    const m3 = manager(3, store.leases);
    try {
      m1.start();
      await m1.settled();
      expect(m1.heldSlots()).toHaveLength(12);
      expect(forgotten.filter(([id]) => id === 1)).toHaveLength(12);

      live.set(2, performance.now() - 10_000);
      live.set(3, performance.now() - 10_000);
      m2.start();
      m3.start();
      const balanced = () => (m1.heldSlots().length === 4 && m2.heldSlots().length === 4 && m3.heldSlots().length === 4 ? true : undefined);
      await waitFor(async () => {
        m1.nudge();
        m2.nudge();
        m3.nudge();
        return balanced();
      }, 10_000);
      const all = [...m1.heldSlots(), ...m2.heldSlots(), ...m3.heldSlots()].sort((a, b) => a - b);
      expect(all).toEqual(Array.from({ length: 12 }, (_, i) => i));
      for (const slot of m2.heldSlots()) expect(m1.ownerOf(slot) ?? 2).toBe(2);

      // Node 2 loses the store: it stops renewing; once its leases expire, 1 and 3 take its slots with new epochs.
      const lost = m2.heldSlots();
      const epochs = new Map(lost.map((s) => [s, m2.epochOf(s)]));
      partitioned = true;
      live.delete(2);
      const tookOver = Date.now();
      await waitFor(async () => {
        m1.nudge();
        m3.nudge();
        return lost.every((s) => m1.ownsWritable(s) || m3.ownsWritable(s)) ? true : undefined;
      }, 10_000);
      expect(Date.now() - tookOver).toBeLessThan(TTL + 3000);
      expect(m1.heldSlots().length + m3.heldSlots().length).toBe(12);
      for (const s of lost) expect(m1.epochOf(s) || m3.epochOf(s)).toBe(epochs.get(s)! + 1);
      // Node 2 itself stops appending once its renewals have failed for a lease TTL.
      await waitFor(async () => (lost.every((s) => !m2.ownsWritable(s)) ? true : undefined), TTL + 1000);

      // A write under the old epoch is refused by the store and writes nothing.
      const slot = lost[0]!;
      const err = await store.messages
        .appendBatch(
          [
            {
              channelId: 'fenced',
              channelType: 2,
              messageSeq: 1,
              messageId: 1n,
              clientMsgNo: 'x',
              fromUid: 'u',
              setting: 0,
              flags: 0,
              expire: 0,
              topic: '',
              createdAt: Date.now(),
              payload: new Uint8Array([1]),
            },
          ],
          [],
          { slot, epoch: epochs.get(slot)! },
        )
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StaleEpochError);
      expect(await store.messages.loadTail('fenced', 2)).toBe(0);
    } finally {
      await m1.stop();
      await m3.stop();
      partitioned = false;
      await m2.stop();
    }
    const { leases } = await store.leases.list();
    expect(leases.every((l) => l.owner === undefined)).toBe(true);
  }, 40_000);
});
