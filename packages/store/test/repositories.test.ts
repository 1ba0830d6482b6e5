import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  isUniqueViolation,
  openEmbeddedStore,
  openPostgresStore,
  StaleEpochError,
  type Dialect,
  type EnsuredMember,
  type LastSendMark,
  type Store,
  type StoredMessage,
} from '../src/index.ts';
import { createTestSchema, postgresReachable, type TestSchema } from '../src/testing.ts';
import { storedMessage } from './support/seq-message.ts';

/**
 * The repositories' behaviour, the same on both engines: each suite runs once
 * on a real SQLite file and once on the real PostgreSQL server in a schema of
 * its own (dropped after).
 */
const pgUp = await postgresReachable();

interface Harness {
  store: Store;
  cleanup(): Promise<void>;
}

async function openStore(dialect: Dialect): Promise<Harness> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'parley-repo-'));
    const store = await openEmbeddedStore({ dataDir: dir, sync: 'normal' });
    return {
      store,
      async cleanup() {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const schema: TestSchema = createTestSchema('parley_repo');
  const store = await openPostgresStore({ url: schema.url, sync: 'full', poolSize: 4 });
  return {
    store,
    async cleanup() {
      await store.close();
      await schema.drop();
    },
  };
}

function message(channelId: string, seq: number, id: bigint, extra: Partial<StoredMessage> = {}): StoredMessage {
  return storedMessage(channelId, seq, { channelType: 2, messageId: id, payload: new Uint8Array([seq & 0xff, 0, 255]), ...extra });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(['sqlite', 'postgres'] as const)('repositories on %s', (dialect) => {
  const skip = dialect === 'postgres' && !pgUp;
  let h: Harness;
  let store: Store;
  beforeAll(async () => {
    if (skip) return;
    h = await openStore(dialect);
    store = h.store;
  });
  afterAll(async () => {
    await h?.cleanup();
  });

  it.skipIf(skip)('devices: upsert, read back, revoke', async () => {
    await store.devices.upsert({ uid: 'u1', deviceFlag: 1, deviceLevel: 0, deviceId: 'd', tokenSha256: 'ab'.repeat(32) });
    await store.devices.upsert({ uid: 'u1', deviceFlag: 1, deviceLevel: 1, deviceId: 'd2', tokenSha256: 'cd'.repeat(32) });
    expect(await store.devices.get('u1', 1)).toEqual({
      uid: 'u1',
      deviceFlag: 1,
      deviceLevel: 1,
      deviceId: 'd2',
      tokenSha256: 'cd'.repeat(32),
    });
    await store.devices.revoke('u1', [1, 2]);
    expect((await store.devices.get('u1', 1))?.tokenSha256).toBe('');
    expect(await store.devices.get('u1', 2)).toBeUndefined();
  });

  it.skipIf(skip)('devices: a CONNECT reads the credentials and the user’s ban in one look-up', async () => {
    await store.devices.upsert({ uid: 'c1', deviceFlag: 1, deviceLevel: 1, deviceId: 'd', tokenSha256: 'ef'.repeat(32) });
    await store.devices.upsert({ uid: 'c2', deviceFlag: 0, deviceLevel: 0, deviceId: 'd', tokenSha256: '01'.repeat(32) });
    // No person channel yet: not banned.
    expect(await store.devices.getForConnect('c1', 1)).toEqual({ deviceLevel: 1, tokenSha256: 'ef'.repeat(32), banned: false });
    await store.channels.upsert('c1', 1, { ban: 1 });
    // A group of the same id, and another user's ban, are not c2's.
    await store.channels.upsert('c2', 2, { ban: 1 });
    expect((await store.devices.getForConnect('c1', 1))?.banned).toBe(true);
    expect((await store.devices.getForConnect('c2', 0))?.banned).toBe(false);
    await store.channels.upsert('c1', 1, { ban: 0 });
    expect((await store.devices.getForConnect('c1', 1))?.banned).toBe(false);
    expect(await store.devices.getForConnect('c1', 0)).toBeUndefined();
  });

  it.skipIf(skip)('channels: flags, sticky disband, member lists in byte order, system uids', async () => {
    await store.channels.upsert('g1', 2, { ban: 1 });
    await store.channels.upsert('g1', 2, { disband: 1 });
    await store.channels.upsert('g1', 2, { disband: 0, large: 1 });
    expect(await store.channels.get('g1', 2)).toEqual({
      channelId: 'g1',
      channelType: 2,
      ban: 1,
      disband: 1,
      large: 1,
      sendBan: 0,
      allowStranger: 0,
    });
    const many = Array.from({ length: 1200 }, (_, i) => `m${String(i).padStart(4, '0')}`);
    await store.channels.addMembers('g1', 2, 'allow', ['b', 'B', 'a', 'é', 'A', ...many]);
    await store.channels.addMembers('g1', 2, 'allow', ['a']);
    await store.channels.removeMembers('g1', 2, 'allow', many.slice(0, 1100));
    // Byte order, as SQLite compares: upper case before lower case, non-ASCII last.
    expect(await store.channels.listMembers('g1', 2, 'allow')).toEqual(['A', 'B', 'a', 'b', ...many.slice(1100), 'é']);
    await store.channels.clearMembers('g1', 2, 'allow');
    expect(await store.channels.listMembers('g1', 2, 'allow')).toEqual([]);
    await store.channels.addSystemUids(['sys2', 'sys1', 'sys1']);
    await store.channels.removeSystemUids(['sys2']);
    expect(await store.channels.listSystemUids()).toEqual(['sys1']);
  });

  it.skipIf(skip)('memberships: join boundaries, tombstones, directory pages, read and hide positions', async () => {
    await store.memberships.addMembers('g2', 2, ['u1', 'u2', 'u3'], 5);
    await store.memberships.addMembers('g2', 2, ['u1'], 9); // live: unchanged
    expect((await store.memberships.get('g2', 2, 'u1'))?.joinSeq).toBe(5);
    await store.memberships.removeMembers('g2', 2, ['u2']);
    expect((await store.memberships.get('g2', 2, 'u2'))?.removed).toBe(true);
    expect((await store.memberships.listLiveUids('g2', 2)).sort()).toEqual(['u1', 'u3']);
    await store.memberships.addMembers('g2', 2, ['u2'], 12); // rejoin: new boundary
    expect(await store.memberships.get('g2', 2, 'u2')).toMatchObject({ joinSeq: 12, removed: false, readSeq: 0 });

    await store.memberships.raiseReadSeq('g2', 2, 'u1', 7);
    await store.memberships.raiseReadSeq('g2', 2, 'u1', 3);
    expect((await store.memberships.get('g2', 2, 'u1'))?.readSeq).toBe(7);
    await store.memberships.hideUpTo('g2', 2, 'u1', 6);
    await store.memberships.hideUpTo('g2', 2, 'u1', 4);
    expect(await store.memberships.get('g2', 2, 'u1')).toMatchObject({ deletedToSeq: 6, activatedAt: 0 });

    for (const [ch, at] of [
      ['pa', 30],
      ['pB', 30],
      ['pc', 10],
      ['pd', 20],
    ] as const) {
      await store.memberships.addMembers(ch, 1, ['dir', 'other'], 1);
      await store.memberships.activate(ch, 1, 'dir', at);
    }
    const all = await store.memberships.pageByUid('dir', undefined, 10);
    expect(all.map((m) => m.channelId)).toEqual(['pB', 'pa', 'pd', 'pc']);
    const first = await store.memberships.pageByUid('dir', undefined, 2);
    const last = first.at(-1)!;
    const next = await store.memberships.pageByUid('dir', { activatedAt: last.activatedAt, channelId: last.channelId, channelType: 1 }, 2);
    expect(next.map((m) => m.channelId)).toEqual(['pd', 'pc']);
    await store.memberships.removeAll('g2', 2);
    expect(await store.memberships.listLiveUids('g2', 2)).toEqual([]);
  });

  it.skipIf(skip)('messages: 64-bit ids exact, tails, ranges, idempotency keys, last-send marks', async () => {
    const big = 9_223_372_036_854_775_807n; // 2^63 - 1: no JS number holds it
    const near = 9_007_199_254_740_993n; // 2^53 + 1
    await store.memberships.addMembers('g3', 2, ['alice'], 1);
    const marks: LastSendMark[] = [{ channelId: 'g3', channelType: 2, uid: 'alice', seq: 3 }];
    await store.messages.appendBatch([message('g3', 1, big), message('g3', 2, near), message('g3', 3, 42n, { clientMsgNo: '' })], marks);
    expect((await store.memberships.get('g3', 2, 'alice'))?.lastSendSeq).toBe(3);
    expect(await store.messages.loadTail('g3', 2)).toBe(3);
    const byId = await store.messages.byIds('g3', 2, [big, near]);
    expect(byId.map((m) => m.messageId).sort()).toEqual([near, big]);
    const one = byId.find((m) => m.messageId === big)!;
    expect({ ...one, payload: [...one.payload] }).toEqual({ ...message('g3', 1, big), payload: [1, 0, 255] });

    const hits = await store.messages.findByIdempotencyKeys([
      { channelId: 'g3', channelType: 2, fromUid: 'alice', clientMsgNo: 'c2' },
      { channelId: 'g3', channelType: 2, fromUid: 'bob', clientMsgNo: 'c2' },
      { channelId: 'g3', channelType: 2, fromUid: 'alice', clientMsgNo: '' },
    ]);
    expect(hits).toEqual([
      { channelId: 'g3', channelType: 2, fromUid: 'alice', clientMsgNo: 'c2', messageId: near, messageSeq: 2, payload: expect.anything() },
    ]);

    const newest = await store.messages.range('g3', 2, 1, 3, 2, true);
    expect(newest.messages.map((m) => m.messageSeq)).toEqual([2, 3]);
    expect(newest.more).toBe(true);
    const oldest = await store.messages.range('g3', 2, 1, 3, 5, false);
    expect(oldest.messages.map((m) => m.messageSeq)).toEqual([1, 2, 3]);
    expect(oldest.more).toBe(false);
    expect((await store.messages.bySeqs('g3', 2, [3, 9])).map((m) => m.messageId)).toEqual([42n]);
    expect((await store.messages.byClientMsgNo('g3', 2, 'c1', 10)).map((m) => m.messageSeq)).toEqual([1]);

    // A batch is all or nothing: a repeated seq fails it and writes nothing.
    const clash = await store.messages.appendBatch([message('g3', 4, 4n), message('g3', 1, 5n)], []).catch((e: unknown) => e);
    expect(isUniqueViolation(clash)).toBe(true);
    expect(await store.messages.loadTail('g3', 2)).toBe(3);
    expect(await store.messages.bySeqs('g3', 2, [4])).toEqual([]);
    // The same when the clash is in a later INSERT of a large batch, after its mark was queued:
    // no earlier row of the batch and no mark is left behind.
    const many = Array.from({ length: 100 }, (_, i) => message('g3', 4 + i, 100n + BigInt(i)));
    const late = await store.messages
      .appendBatch([...many, message('g3', 2, 999n)], [{ channelId: 'g3', channelType: 2, uid: 'alice', seq: 103 }])
      .catch((e: unknown) => e);
    expect(isUniqueViolation(late)).toBe(true);
    expect(await store.messages.loadTail('g3', 2)).toBe(3);
    expect((await store.memberships.get('g3', 2, 'alice'))?.lastSendSeq).toBe(3);
    await store.messages.appendBatch(many, []);
    expect(await store.messages.loadTail('g3', 2)).toBe(103);
  });

  // Only the embedded store's writer has appendChecked: the test exists on SQLite alone (not skipped elsewhere).
  if (dialect === 'sqlite')
    it('appendChecked (embedded writer): commits a batch with no earlier key, else writes nothing and returns the earlier messages', async () => {
      const checked = store.messages.appendChecked!;
      expect(checked).toBeTypeOf('function');
      await store.memberships.addMembers('k1', 2, ['alice'], 1);
      const mark = (seq: number): LastSendMark[] => [{ channelId: 'k1', channelType: 2, uid: 'alice', seq }];
      expect(await checked([message('k1', 1, 501n), message('k1', 2, 502n, { clientMsgNo: '' })], mark(2))).toEqual([]);
      expect(await store.messages.loadTail('k1', 2)).toBe(2);
      expect((await store.memberships.get('k1', 2, 'alice'))?.lastSendSeq).toBe(2);

      // c1 is taken: nothing of the batch is written, not even its new c9, and c1's message comes back.
      const hits = await checked([message('k1', 3, 503n, { clientMsgNo: 'c9' }), message('k1', 4, 504n, { clientMsgNo: 'c1' })], mark(4));
      expect(hits).toEqual([
        {
          channelId: 'k1',
          channelType: 2,
          fromUid: 'alice',
          clientMsgNo: 'c1',
          messageId: 501n,
          messageSeq: 1,
          payload: expect.anything(),
        },
      ]);
      expect([...hits[0]!.payload]).toEqual([1, 0, 255]);
      expect(await store.messages.loadTail('k1', 2)).toBe(2);
      expect((await store.memberships.get('k1', 2, 'alice'))?.lastSendSeq).toBe(2);
      // Another sender's c1 and an empty client_msg_no are not earlier keys.
      expect(
        await checked([message('k1', 3, 505n, { clientMsgNo: 'c1', fromUid: 'bob' }), message('k1', 4, 506n, { clientMsgNo: '' })], []),
      ).toEqual([]);
      expect(await store.messages.loadTail('k1', 2)).toBe(4);
    });

  it.skipIf(skip)('messages: payloads that are views into shared buffers are stored byte for byte and stay the caller’s', async () => {
    // One backing buffer for several payloads at odd offsets, one empty, one from Node's allocation pool:
    // the embedded store's writer copies them into a buffer of the batch's own and transfers that.
    const shared = new Uint8Array(64).map((_, i) => (i * 37 + 11) & 0xff);
    const pooled = Buffer.from('{"b":"pooled"}');
    const payloads = [shared.subarray(3, 10), shared.subarray(0, 0), shared.subarray(9, 40), pooled, shared.subarray(63)];
    const copies = payloads.map((p) => [...p]);
    const rows = payloads.map((payload, i) => message('pv1', i + 1, 1_000n + BigInt(i), { payload }));
    const [first, ...rest] = rows;
    await store.messages.appendBatch([first!], []);
    const checked = store.messages.appendChecked;
    if (checked) expect(await checked(rest, [])).toEqual([]);
    else await store.messages.appendBatch(rest, []);
    const stored = await store.messages.bySeqs('pv1', 2, [1, 2, 3, 4, 5]);
    expect(stored.map((m) => [Number(m.messageSeq), [...m.payload]])).toEqual(copies.map((c, i) => [i + 1, c]));
    // Nothing of the caller's was moved to the writer thread: the views and the pool still hold their bytes.
    expect(payloads.map((p) => [...p])).toEqual(copies);
    expect(shared.byteLength).toBe(64);
    expect(pooled.toString()).toBe('{"b":"pooled"}');
  });

  it.skipIf(skip)('messages: every row keeps its own setting, flags, expire and topic, shared by the batch or not', async () => {
    // A guard for any writer that treats values a batch shares apart from the others (one such was
    // measured: README, "Where the writer thread's instructions go").
    const shared = { setting: 3, flags: 5, expire: 2 ** 40 + 7 };
    const sharedRows = [1, 2, 3].map((seq) => message('sc1', seq, 1_100n + BigInt(seq), { ...shared, createdAt: 1_800_000_000_000 + seq }));
    // Batches of two rows that differ in one of the four only (the second row), then a batch of one row.
    const differing: Partial<StoredMessage>[] = [{ flags: 6 }, { topic: 't' }, { setting: 0 }, { expire: 0 }];
    const pairs = differing.map((d, k) => [
      message('sc1', 4 + 2 * k, 1_104n + BigInt(2 * k), { ...shared }),
      message('sc1', 5 + 2 * k, 1_105n + BigInt(2 * k), { ...shared, ...d }),
    ]);
    const lone = [message('sc1', 12, 1_112n, { setting: 1, flags: 2, expire: 3 })];
    const checked = store.messages.appendChecked;
    for (const rows of [sharedRows, ...pairs, lone]) {
      if (checked) expect(await checked(rows, [])).toEqual([]);
      else await store.messages.appendBatch(rows, []);
    }
    const want = [sharedRows, ...pairs, lone].flat();
    const got = await store.messages.bySeqs('sc1', 2, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    const view = (m: StoredMessage) => ({
      seq: Number(m.messageSeq),
      id: BigInt(m.messageId),
      clientMsgNo: m.clientMsgNo,
      fromUid: m.fromUid,
      setting: Number(m.setting),
      flags: Number(m.flags),
      expire: Number(m.expire),
      topic: m.topic,
      createdAt: Number(m.createdAt),
      payload: [...m.payload],
    });
    expect(got.map(view)).toEqual(want.map(view));
    // Their idempotency keys were written too: each is found again.
    if (checked) {
      const again = await checked(
        [message('sc1', 13, 1_113n, { clientMsgNo: 'c2' }), message('sc1', 14, 1_114n, { clientMsgNo: 'c12' })],
        [],
      );
      expect(again.map((h) => [h.clientMsgNo, h.messageId, h.messageSeq])).toEqual([
        ['c2', 1_102n, 2],
        ['c12', 1_112n, 12],
      ]);
    }
  });

  it.skipIf(skip)('messages: seventy-one latest-send marks in one batch, each only raised', async () => {
    const uids = Array.from({ length: 70 }, (_, i) => `m${i}`);
    await store.memberships.addMembers('lm1', 2, uids, 1);
    await store.memberships.addMembers('lm2', 2, ['m0'], 1);
    const rows = uids.map((uid, i) => message('lm1', i + 1, 700n + BigInt(i), { fromUid: uid }));
    const marks: LastSendMark[] = uids.map((uid, i) => ({ channelId: 'lm1', channelType: 2, uid, seq: i + 1 }));
    marks.push({ channelId: 'lm2', channelType: 2, uid: 'm0', seq: 1 });
    await store.messages.appendBatch([...rows, message('lm2', 1, 800n, { fromUid: 'm0' })], marks);
    for (const [i, uid] of uids.entries()) expect((await store.memberships.get('lm1', 2, uid))?.lastSendSeq).toBe(i + 1);
    expect((await store.memberships.get('lm2', 2, 'm0'))?.lastSendSeq).toBe(1);
    // A mark below the one stored leaves it; the others of the batch still apply.
    await store.messages.appendBatch(
      [message('lm1', 71, 900n, { fromUid: 'm1' }), message('lm2', 2, 901n, { fromUid: 'm0' })],
      [
        { channelId: 'lm1', channelType: 2, uid: 'm5', seq: 3 },
        { channelId: 'lm1', channelType: 2, uid: 'm1', seq: 71 },
        { channelId: 'lm2', channelType: 2, uid: 'm0', seq: 2 },
      ],
    );
    expect((await store.memberships.get('lm1', 2, 'm5'))?.lastSendSeq).toBe(6);
    expect((await store.memberships.get('lm1', 2, 'm1'))?.lastSendSeq).toBe(71);
    expect((await store.memberships.get('lm2', 2, 'm0'))?.lastSendSeq).toBe(2);
  });

  it.skipIf(skip)('events: numbered per message, idempotent by id, concurrent appends take distinct seqs', async () => {
    const base = {
      channelId: 'g4',
      channelType: 2,
      clientMsgNo: 'm1',
      eventKey: 'k',
      eventType: 'stream.delta',
      fromUid: 'alice',
      messageId: 2n ** 62n,
      visibility: 'public',
      occurredAt: 1,
      payload: '{"a":1}',
    };
    const first = await store.events.append({ ...base, eventId: 'e0' });
    expect(first.eventSeq).toBe(1);
    expect((await store.events.append({ ...base, eventId: 'e0', payload: 'null' })).payload).toBe('{"a":1}');
    const many = await Promise.all(Array.from({ length: 24 }, (_, i) => store.events.append({ ...base, eventId: `e${i + 1}` })));
    const seqs = Array.from({ length: 24 }, (_, i) => i + 2);
    expect(many.map((e) => e.eventSeq).sort((a, b) => a - b)).toEqual(seqs);
    const listed = await store.events.list('g4', 2, 'm1', 0, 100);
    expect(listed.map((e) => e.eventSeq)).toEqual([1, ...seqs]);
    expect(listed[0]!.messageId).toBe(2n ** 62n);
  });

  it.skipIf(skip)('command bindings: bind, ack never lowers, unbind and rebind', async () => {
    await store.cmdBindings.bind(['u1', 'u2'], 'x____cmd', 2, 4);
    await store.cmdBindings.bind(['u1'], 'x____cmd', 2, 9); // live: unchanged
    await store.cmdBindings.ack('u1', 'x____cmd', 2, 6);
    await store.cmdBindings.ack('u1', 'x____cmd', 2, 5);
    expect(await store.cmdBindings.listLive('u1', 10)).toEqual([{ channelId: 'x____cmd', channelType: 2, startSeq: 4, ackSeq: 6 }]);
    await store.cmdBindings.unbind(['u1'], 'x____cmd', 2);
    expect(await store.cmdBindings.listLive('u1', 10)).toEqual([]);
    await store.cmdBindings.bind(['u1'], 'x____cmd', 2, 11);
    expect(await store.cmdBindings.listLive('u1', 10)).toEqual([{ channelId: 'x____cmd', channelType: 2, startSeq: 11, ackSeq: 0 }]);
  });

  it.skipIf(skip)(
    'slot leases: acquire only when free or expired (raising the epoch), renew and release only by owner and epoch',
    async () => {
      const a = await store.leases.acquire(1, 101, 60_000);
      expect(a).toMatchObject({ slot: 1, owner: 101, epoch: 1 });
      expect(await store.leases.acquire(1, 102, 60_000)).toBeUndefined();
      expect(await store.leases.acquire(1, 101, 60_000)).toBeUndefined(); // even its own live lease
      const renewed = await store.leases.renew(1, 101, 1, 120_000);
      expect(renewed!.expiresAt).toBeGreaterThan(a!.expiresAt);
      expect(await store.leases.renew(1, 102, 1, 60_000)).toBeUndefined();
      expect(await store.leases.renew(1, 101, 2, 60_000)).toBeUndefined();

      // Expiry: another node takes over with the next epoch; the old owner can neither renew nor release.
      const short = await store.leases.acquire(2, 101, 30);
      expect(short!.epoch).toBe(1);
      await sleep(80);
      const taken = await store.leases.acquire(2, 102, 60_000);
      expect(taken).toMatchObject({ slot: 2, owner: 102, epoch: 2 });
      expect(await store.leases.renew(2, 101, 1, 60_000)).toBeUndefined();
      expect(await store.leases.release(2, 101, 1)).toBe(false);

      expect(await store.leases.release(1, 101, 1)).toBe(true);
      expect(await store.leases.get(1)).toEqual({ slot: 1, owner: undefined, epoch: 1, expiresAt: 0 });
      expect(await store.leases.acquire(1, 103, 60_000)).toMatchObject({ owner: 103, epoch: 2 });

      const { now, leases } = await store.leases.list();
      expect(leases.map((l) => [l.slot, l.owner, l.epoch])).toEqual([
        [1, 103, 2],
        [2, 102, 2],
      ]);
      expect(leases.every((l) => l.expiresAt > now)).toBe(true);
      expect(Math.abs(now - Date.now())).toBeLessThan(60_000);
      await expect(store.leases.acquire(3, 1, 0)).rejects.toThrow(RangeError);
    },
  );

  it.skipIf(skip)('slot leases: of many nodes racing for a free slot exactly one wins', async () => {
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => store.leases.acquire(7, 200 + i, 60_000)));
    const winners = results.filter((r) => r !== undefined);
    expect(winners).toHaveLength(1);
    expect(winners[0]!.epoch).toBe(1);
  });

  it.skipIf(skip)('append fence: a batch under the current epoch commits; a stale or missing lease fails the whole batch', async () => {
    const lease = (await store.leases.acquire(20, 1, 60_000))!;
    await store.messages.appendBatch([message('f1', 1, 1001n)], [], { slot: 20, epoch: lease.epoch });
    expect(await store.messages.loadTail('f1', 2)).toBe(1);
    await store.leases.release(20, 1, lease.epoch);
    const next = (await store.leases.acquire(20, 2, 60_000))!;
    const stale = store.messages.appendBatch([message('f1', 2, 1002n), message('f1', 3, 1003n)], [], { slot: 20, epoch: lease.epoch });
    await expect(stale).rejects.toBeInstanceOf(StaleEpochError);
    await expect(stale).rejects.toMatchObject({ currentEpoch: next.epoch, fence: { slot: 20, epoch: lease.epoch } });
    expect(await store.messages.loadTail('f1', 2)).toBe(1);
    await expect(store.messages.appendBatch([message('f1', 2, 1002n)], [], { slot: 21, epoch: 1 })).rejects.toMatchObject({
      name: 'StaleEpochError',
      currentEpoch: undefined,
    });
    await store.messages.appendBatch([message('f1', 2, 1002n)], [], { slot: 20, epoch: next.epoch });
    expect(await store.messages.loadTail('f1', 2)).toBe(2);
    // One fence per physical slot of a batch: all must hold.
    const other = (await store.leases.acquire(22, 2, 60_000))!;
    const both = [
      { slot: 20, epoch: next.epoch },
      { slot: 22, epoch: other.epoch },
    ];
    await store.messages.appendBatch([message('f1', 3, 1003n), message('f2', 1, 2001n)], [], both);
    await expect(
      store.messages.appendBatch([message('f1', 4, 1004n)], [], [both[0]!, { slot: 22, epoch: other.epoch + 1 }]),
    ).rejects.toMatchObject({ name: 'StaleEpochError', fence: { slot: 22 }, currentEpoch: other.epoch });
    expect(await store.messages.loadTail('f1', 2)).toBe(3);
  });

  it.skipIf(skip)('channels: a row and its deny and allow lists in one statement (permissionState)', async () => {
    await store.channels.upsert('ps1', 2, { ban: 1, allowStranger: 1 });
    await store.channels.addMembers('ps1', 2, 'deny', ['zed', 'amy']);
    await store.channels.addMembers('ps1', 2, 'allow', ['bob']);
    await store.channels.addMembers('ps1', 2, 'temp', ['tim']);
    await store.channels.addMembers('ps2', 2, 'allow', ['cy']);
    const state = await store.channels.permissionState('ps1', 2);
    expect({ ...state, deny: [...state.deny].sort() }).toEqual({
      row: { channelId: 'ps1', channelType: 2, ban: 1, disband: 0, large: 0, sendBan: 0, allowStranger: 1 },
      deny: ['amy', 'zed'],
      allow: ['bob'],
    });
    expect(await store.channels.permissionState('ps2', 2)).toEqual({ row: undefined, deny: [], allow: ['cy'] });
    expect(await store.channels.permissionState('ps1', 1)).toEqual({ row: undefined, deny: [], allow: [] });
  });

  it.skipIf(skip)('loadTails: many channels’ tails in the order asked, past one statement’s share', async () => {
    // 620 channels, channel i holding i % 4 messages (0 to 3).
    const rows: StoredMessage[] = [];
    for (let i = 0; i < 620; i++) for (let seq = 1; seq <= i % 4; seq++) rows.push(message(`lt${i}`, seq, 70_000n + BigInt(i * 4 + seq)));
    await store.messages.appendBatch(rows, []);
    const asked = Array.from({ length: 620 }, (_, i) => ({ channelId: `lt${619 - i}`, channelType: 2 }));
    expect(await store.messages.loadTails(asked)).toEqual(asked.map((_, i) => (619 - i) % 4));
    expect(await store.messages.loadTails([])).toEqual([]);
  });

  it.skipIf(skip)('appendBatch: the memberships a batch brings are made in its transaction (marks included), or not at all', async () => {
    const pair = (channelId: string, a: string, b: string): EnsuredMember[] => [
      { channelId, channelType: 1, uid: a },
      { channelId, channelType: 1, uid: b },
    ];
    const sent = (channelId: string, seq: number, id: bigint, fromUid: string) => message(channelId, seq, id, { channelType: 1, fromUid });
    const mark = (channelId: string, uid: string, seq: number): LastSendMark => ({ channelId, channelType: 1, uid, seq });
    // A new channel: both memberships made with join_seq 1, the sender's carrying the batch's mark; a pair brought twice is made once.
    await store.messages.appendBatch([sent('m1', 1, 3001n, 'amy'), sent('m1', 2, 3002n, 'amy')], [mark('m1', 'amy', 2)], undefined, [
      ...pair('m1', 'amy', 'ben'),
      ...pair('m1', 'amy', 'ben'),
    ]);
    expect(await store.memberships.get('m1', 1, 'amy')).toMatchObject({ joinSeq: 1, lastSendSeq: 2, readSeq: 0 });
    expect(await store.memberships.get('m1', 1, 'ben')).toMatchObject({ joinSeq: 1, lastSendSeq: 0 });
    // Memberships that exist stay as they are (read state, join_seq); the marks raise them as always.
    await store.memberships.raiseReadSeq('m1', 1, 'ben', 2);
    await store.messages.appendBatch([sent('m1', 3, 3003n, 'ben')], [mark('m1', 'ben', 3)], undefined, pair('m1', 'amy', 'ben'));
    expect(await store.memberships.get('m1', 1, 'ben')).toMatchObject({ joinSeq: 1, readSeq: 2, lastSendSeq: 3 });
    expect((await store.memberships.get('m1', 1, 'amy'))?.lastSendSeq).toBe(2);
    // A batch that fails makes none: a taken seq …
    const clash = await store.messages
      .appendBatch([sent('m2', 1, 3101n, 'cat'), sent('m1', 1, 3102n, 'amy')], [mark('m2', 'cat', 1)], undefined, pair('m2', 'cat', 'dan'))
      .catch((e: unknown) => e);
    expect(isUniqueViolation(clash)).toBe(true);
    expect(await store.memberships.get('m2', 1, 'cat')).toBeUndefined();
    // … or a stale fence.
    const lease = (await store.leases.acquire(30, 1, 60_000))!;
    await expect(
      store.messages.appendBatch([sent('m2', 1, 3101n, 'cat')], [], { slot: 30, epoch: lease.epoch + 1 }, pair('m2', 'cat', 'dan')),
    ).rejects.toBeInstanceOf(StaleEpochError);
    expect(await store.memberships.get('m2', 1, 'dan')).toBeUndefined();
    // Under a fence that holds, in a batch past one statement's size (PostgreSQL's transaction path).
    const big = Array.from({ length: 2001 }, (_, i) => sent('m2', i + 1, 4000n + BigInt(i), 'cat'));
    await store.messages.appendBatch(big, [mark('m2', 'cat', 2001)], { slot: 30, epoch: lease.epoch }, pair('m2', 'cat', 'dan'));
    expect(await store.memberships.get('m2', 1, 'cat')).toMatchObject({ joinSeq: 1, lastSendSeq: 2001 });
    expect(await store.memberships.get('m2', 1, 'dan')).toMatchObject({ joinSeq: 1, lastSendSeq: 0 });
    expect(await store.messages.loadTail('m2', 1)).toBe(2001);
  });

  it.skipIf(skip)('cluster nodes: heartbeats by the database clock, restarts, removal', async () => {
    await store.clusterNodes.heartbeat(2, { api: 'http://127.0.0.1:5002' }, 1, true);
    await store.clusterNodes.heartbeat(1, { api: 'http://127.0.0.1:5001' }, 3, true);
    const before = (await store.clusterNodes.list()).nodes.find((n) => n.nodeId === 1)!;
    await sleep(5);
    await store.clusterNodes.heartbeat(1, { api: 'http://127.0.0.1:5011' }, 4);
    const { now, nodes } = await store.clusterNodes.list();
    expect(nodes.map((n) => n.nodeId)).toEqual([1, 2]);
    expect(nodes[0]).toMatchObject({ addresses: { api: 'http://127.0.0.1:5011' }, stateRevision: 4, startedAt: before.startedAt });
    expect(nodes[0]!.lastSeen).toBeGreaterThan(before.lastSeen);
    expect(now).toBeGreaterThanOrEqual(nodes[0]!.lastSeen);
    await store.clusterNodes.remove(2);
    expect((await store.clusterNodes.list()).nodes.map((n) => n.nodeId)).toEqual([1]);
  });

  it.skipIf(skip)('readiness probes: ping and a committed write probe', async () => {
    await store.ping();
    await store.probeWrite(200);
    await store.probeWrite(200);
    expect(store.health.failing).toBeUndefined();
  });
});
