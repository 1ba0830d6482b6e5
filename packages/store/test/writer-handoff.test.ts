import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openEmbeddedStore, STORE_FILE, type MessageEvent, type Store, type StoredMessage } from '../src/index.ts';
import { storedMessage } from './support/seq-message.ts';

/**
 * The embedded store's hand-off to its writer thread (`sqlite/writer.ts`): batches handed over
 * without waiting for one another are settled in order, each with its own outcome; a failed or
 * idempotent batch does not disturb the ones around it; closing the store settles every batch
 * handed over before, committed; every field arrives as given, with its column's type. Real
 * threads, a real file, `sync=full`.
 */

function message(channelId: string, seq: number, id: bigint, extra: Partial<StoredMessage> = {}): StoredMessage {
  return storedMessage(channelId, seq, { messageId: id, payload: new Uint8Array([seq & 0xff, 1, 2]), ...extra });
}

/** A stream event of message `clientMsgNo` in group g1, every other field a plain default. */
function event(clientMsgNo: string, eventId: string, extra: Partial<Omit<MessageEvent, 'eventSeq' | 'createdAt'>> = {}) {
  return {
    channelId: 'g1',
    channelType: 2,
    clientMsgNo,
    eventId,
    eventKey: 'main',
    eventType: 'stream.delta',
    fromUid: 'bot',
    messageId: 1n,
    visibility: '',
    occurredAt: 0,
    payload: '"x"',
    ...extra,
  };
}

const dirs: string[] = [];
const stores: Store[] = [];

async function open(dir?: string): Promise<{ store: Store; dir: string }> {
  const d = dir ?? mkdtempSync(join(tmpdir(), 'parley-handoff-'));
  if (!dir) dirs.push(d);
  const store = await openEmbeddedStore({ dataDir: d, sync: 'full' });
  stores.push(store);
  return { store, dir: d };
}

afterEach(async () => {
  for (const s of stores.splice(0)) await s.close().catch(() => undefined);
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('embedded writer hand-off', () => {
  it('settles batches handed over together in order, each with its own outcome', async () => {
    const { store } = await open();
    await store.memberships.addMembers('h1', 1, ['alice'], 1);
    const checked = store.messages.appendChecked!;
    // Handed over at once: a commit, a batch repeating its key (hits), a batch taking a taken seq
    // (a constraint failure), then a commit again; none waits for the one before.
    const outcomes = await Promise.allSettled([
      checked([message('h1', 1, 11n), message('h1', 2, 12n)], [{ channelId: 'h1', channelType: 1, uid: 'alice', seq: 2 }]),
      checked([message('h1', 3, 13n, { clientMsgNo: 'c1' })], []),
      checked([message('h1', 2, 14n, { clientMsgNo: 'other' })], []),
      checked([message('h1', 3, 15n)], [{ channelId: 'h1', channelType: 1, uid: 'alice', seq: 3 }]),
      store.messages.appendBatch([message('h1', 4, 16n)], []),
    ]);
    expect(outcomes[0]).toEqual({ status: 'fulfilled', value: [] });
    expect(outcomes[1].status).toBe('fulfilled');
    const hits = (outcomes[1] as PromiseFulfilledResult<Awaited<ReturnType<typeof checked>>>).value;
    expect(hits.map((h) => [h.clientMsgNo, h.messageId, h.messageSeq, [...h.payload]])).toEqual([['c1', 11n, 1, [1, 1, 2]]]);
    expect(outcomes[2].status).toBe('rejected');
    expect(((outcomes[2] as PromiseRejectedResult).reason as { code?: string }).code).toMatch(/^SQLITE_CONSTRAINT/);
    expect(outcomes[3]).toEqual({ status: 'fulfilled', value: [] });
    expect(outcomes[4]).toEqual({ status: 'fulfilled', value: undefined });
    const rows = await store.messages.bySeqs('h1', 1, [1, 2, 3, 4]);
    expect(rows.map((m) => [Number(m.messageSeq), m.messageId])).toEqual([
      [1, 11n],
      [2, 12n],
      [3, 15n],
      [4, 16n],
    ]);
    expect((await store.memberships.get('h1', 1, 'alice'))?.lastSendSeq).toBe(3);
    // A failed batch leaves the writer as it was: the next one commits.
    expect(await checked([message('h1', 5, 17n)], [])).toEqual([]);
    expect(await store.messages.loadTail('h1', 1)).toBe(5);
  });

  it("makes a batch's memberships in its own transaction: with its rows or not at all; one that exists stays as it was", async () => {
    const { store } = await open();
    const checked = store.messages.appendChecked!;
    const pair = (channelId: string, a: string, b: string) => [
      { channelId, channelType: 1, uid: a },
      { channelId, channelType: 1, uid: b },
    ];
    const member = (channelId: string, uid: string) => store.memberships.get(channelId, 1, uid);
    await store.memberships.addMembers('p1', 1, ['bob', 'dave'], 1);
    await store.memberships.raiseReadSeq('p1', 1, 'bob', 5);
    expect(await checked([message('p2', 1, 21n)], [])).toEqual([]);

    // A batch that fails (seq 1 of p2 is taken) and one that repeats an earlier key (nothing written).
    const failed = checked([message('p2', 1, 22n, { clientMsgNo: 'other' })], [], pair('p2', 'alice', 'carol'));
    await expect(failed).rejects.toMatchObject({ code: expect.stringMatching(/^SQLITE_CONSTRAINT/) });
    const hits = await checked([message('p2', 2, 23n, { clientMsgNo: 'c1' })], [], pair('p2', 'alice', 'erin'));
    expect(hits.map((h) => h.messageId)).toEqual([21n]);
    for (const uid of ['alice', 'carol', 'erin']) expect(await member('p2', uid)).toBeUndefined();

    // A batch that commits: its memberships with it, an existing one left as it was.
    expect(await checked([message('p1', 1, 31n)], [], pair('p1', 'alice', 'bob'))).toEqual([]);
    expect(await member('p1', 'alice')).toMatchObject({ joinSeq: 1, readSeq: 0, removed: false });
    expect(await member('p1', 'bob')).toMatchObject({ joinSeq: 1, readSeq: 5 });
    expect(await member('p1', 'dave')).toMatchObject({ joinSeq: 1 });
  });

  it('closing the store settles every batch handed over before it, committed', async () => {
    const { store, dir } = await open();
    const pending: Promise<unknown>[] = [];
    for (let b = 0; b < 40; b++) {
      const rows = [0, 1, 2].map((k) => message('h2', b * 3 + k + 1, 1_000n + BigInt(b * 3 + k)));
      pending.push(b % 2 === 0 ? store.messages.appendChecked!(rows, []) : store.messages.appendBatch(rows, []));
    }
    stores.splice(stores.indexOf(store), 1);
    const closing = store.close();
    const outcomes = await Promise.allSettled(pending);
    await closing;
    expect(outcomes.filter((o) => o.status !== 'fulfilled')).toEqual([]);
    const again = await open(dir);
    expect(await again.store.messages.loadTail('h2', 1)).toBe(120);
  });

  it('strings that are not ASCII reach the writer unit for unit: both connections find their idempotency key', async () => {
    const { store } = await open();
    // Accents, CJK, a surrogate pair and lone surrogates: the idempotency hash is over UTF-16 units, computed
    // by the writer thread when it commits and by the main connection when it looks a key up.
    const key = { channelId: 'grüppe-日本', channelType: 1, fromUid: 'ü\ud800', clientMsgNo: 'k\ud83d\ude00\udc00' };
    const m = message(key.channelId, 1, 77n, { fromUid: key.fromUid, clientMsgNo: key.clientMsgNo, topic: 'tö' });
    expect(await store.messages.appendChecked!([m], [])).toEqual([]);
    const found = await store.messages.findByIdempotencyKeys([key]);
    expect(found.map((h) => [h.messageId, h.messageSeq])).toEqual([[77n, 1]]);
    const again = await store.messages.appendChecked!(
      [message(key.channelId, 2, 78n, { fromUid: key.fromUid, clientMsgNo: key.clientMsgNo })],
      [],
    );
    expect(again.map((h) => [h.messageId, h.messageSeq])).toEqual([[77n, 1]]);
    const [stored] = await store.messages.bySeqs(key.channelId, 1, [1]);
    expect([stored?.channelId, stored?.topic]).toEqual([key.channelId, 'tö']);
  });

  it('stores every field of every message as given, with its column type, and refuses an id outside int64', async () => {
    const { store, dir } = await open();
    const rows: StoredMessage[] = [
      message('p1', 1, (1n << 63n) - 1n, { setting: 255, flags: 7, expire: 2 ** 32 - 1, createdAt: 2 ** 52, payload: new Uint8Array(0) }),
      message('p1', 2, -(1n << 63n), { clientMsgNo: '', topic: 'topic/é', payload: new Uint8Array(3000).fill(0xab) }),
      message('p2', 2 ** 40, 9_007_199_254_740_993n, { channelType: 2, fromUid: '群', payload: new Uint8Array([0, 255]) }),
    ];
    await store.messages.appendBatch(rows, []);
    const db = new SqliteDatabase(join(dir, STORE_FILE), { readonly: true });
    db.defaultSafeIntegers(true);
    try {
      const stored = db
        .prepare(
          `select channel_id, channel_type, message_seq, message_id, client_msg_no, from_uid, setting, flags, expire, topic, created_at, payload,
             typeof(channel_type) || typeof(message_seq) || typeof(message_id) || typeof(setting) || typeof(flags) || typeof(expire) || typeof(created_at) as types
           from messages order by channel_id, message_seq`,
        )
        .all() as Record<string, unknown>[];
      expect(stored).toEqual(
        rows.map((m) => ({
          channel_id: m.channelId,
          channel_type: BigInt(m.channelType),
          message_seq: BigInt(m.messageSeq),
          message_id: m.messageId,
          client_msg_no: m.clientMsgNo,
          from_uid: m.fromUid,
          setting: BigInt(m.setting),
          flags: BigInt(m.flags),
          expire: BigInt(m.expire),
          topic: m.topic,
          created_at: BigInt(m.createdAt),
          payload: Buffer.from(m.payload),
          types: 'integer'.repeat(7),
        })),
      );
      // 2^63 does not fit an int64: the whole batch is refused (SQLite's binding), nothing written.
      await expect(store.messages.appendBatch([message('p3', 1, 1n), message('p3', 2, 1n << 63n)], [])).rejects.toThrow(/too big/);
      expect(db.prepare(`select count(*) from messages where channel_id = 'p3'`).pluck().get()).toBe(0n);
    } finally {
      db.close();
    }
  });

  it.runIf(process.platform === 'linux')('its two threads carry their own names (top -H, perf, the bench per thread)', async () => {
    // Names of this process's threads with their count; a thread may end while being read.
    const names = () => {
      const count = new Map<string, number>();
      for (const tid of readdirSync('/proc/self/task')) {
        try {
          const name = readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
          count.set(name, (count.get(name) ?? 0) + 1);
        } catch {
          // Ended meanwhile.
        }
      }
      return count;
    };
    const before = names();
    const { store } = await open();
    const during = names();
    for (const name of ['parley-writer', 'parley-ckpt']) expect((during.get(name) ?? 0) - (before.get(name) ?? 0), name).toBe(1);
    stores.splice(stores.indexOf(store), 1);
    await store.close();
    const after = names();
    for (const name of ['parley-writer', 'parley-ckpt']) expect(after.get(name) ?? 0, name).toBe(before.get(name) ?? 0);
  });

  it('closing the store a second time, at once or after, resolves (it hung waiting for an exited thread)', async () => {
    const { store, dir } = await open();
    await store.messages.appendBatch([message('h3', 1, 31n)], []);
    stores.splice(stores.indexOf(store), 1);
    const bounded = (p: Promise<void>) =>
      Promise.race([p.then(() => 'closed'), new Promise((resolve) => setTimeout(() => resolve('hung'), 5_000))]);
    expect(await Promise.all([bounded(store.close()), bounded(store.close())])).toEqual(['closed', 'closed']);
    expect(await bounded(store.close())).toBe('closed');
    const again = await open(dir);
    expect(await again.store.messages.loadTail('h3', 1)).toBe(1);
  });

  it('stores stream events beside committing message batches, every one, numbered in the order appended', async () => {
    // Event appends ran on the main connection (read the last seq, then insert): a commit by this
    // thread between the two refused the insert with SQLITE_BUSY, and a stream delta was lost.
    const { store } = await open();
    let writing = true;
    let committed = 0;
    const sends = (async () => {
      for (let seq = 1; writing; seq++) {
        await store.messages.appendBatch([message('w1', seq, BigInt(seq))], []);
        committed = seq;
      }
    })();
    const failures: string[] = [];
    const appended: number[] = [];
    // Appends until the writer has committed 50 batches alongside them (bounded: 2,000 appends).
    for (let i = 1; committed < 50 && i <= 2_000; i++) {
      // A pause between appends, so the loop above keeps handing the writer batches.
      await new Promise((resolve) => setTimeout(resolve, 1));
      try {
        appended.push((await store.events.append(event('ai-1', `d${i}`))).eventSeq);
      } catch (err) {
        failures.push((err as { code?: string }).code ?? String(err));
      }
    }
    writing = false;
    await sends;
    expect(committed).toBeGreaterThanOrEqual(50);
    expect(failures).toEqual([]);
    expect(appended).toEqual(Array.from({ length: appended.length }, (_, i) => i + 1));
    expect((await store.events.list('g1', 2, 'ai-1', 0, 10_000)).map((e) => e.eventId)).toEqual(appended.map((n) => `d${n}`));
  });

  it('commits the events of one turn together: numbered per message in order, a repeated id answering the stored event', async () => {
    const { store, dir } = await open();
    const first = await store.events.append(event('m1', 'a', { payload: '{"delta":"Hel"}', messageId: 2124331629039063041n }));
    expect(first).toMatchObject({ eventSeq: 1, eventId: 'a', messageId: 2124331629039063041n, payload: '{"delta":"Hel"}' });
    // Appended in one turn: one hand-over, one transaction.
    const turn = await Promise.all([
      store.events.append(event('m1', 'b')),
      store.events.append(event('m2', 'a')),
      store.events.append(event('m1', 'a', { payload: '"other"' })),
      store.events.append(event('m1', 'c', { eventType: 'stream.close' })),
      store.events.append(event('m1', 'b', { payload: '"again"' })),
    ]);
    expect(turn.map((e) => [e.clientMsgNo, e.eventId, e.eventSeq, e.payload])).toEqual([
      ['m1', 'b', 2, '"x"'],
      ['m2', 'a', 1, '"x"'],
      ['m1', 'a', 1, '{"delta":"Hel"}'],
      ['m1', 'c', 3, '"x"'],
      ['m1', 'b', 2, '"x"'],
    ]);
    expect(turn[2]).toEqual(first);
    // Appended right before the store closes: settled, and stored.
    const last = store.events.append(event('m1', 'd'));
    await store.close();
    expect((await last).eventSeq).toBe(4);
    stores.splice(stores.indexOf(store), 1);
    const again = await open(dir);
    const listed = await again.store.events.list('g1', 2, 'm1', 0, 100);
    expect(listed.map((e) => [e.eventSeq, e.eventId, e.eventType])).toEqual([
      [1, 'a', 'stream.delta'],
      [2, 'b', 'stream.delta'],
      [3, 'c', 'stream.close'],
      [4, 'd', 'stream.delta'],
    ]);
    expect(listed[0]).toEqual(first);
  });
});
