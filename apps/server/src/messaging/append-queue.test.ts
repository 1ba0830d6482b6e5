import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openEmbeddedStore, StaleEpochError, type EnsuredMember, type Store, type StoredMessage } from '@parley/store';
import {
  AppendQueue,
  COMMIT_WINDOW_MS,
  commitQuietMs,
  commitWindowMs,
  storedRow,
  type AppendResult,
  type NewMessage,
} from './append-queue.ts';

let store: Store;
let queue: AppendQueue;
let nextId = 1000n;

beforeEach(async () => {
  store = await openEmbeddedStore({ dataDir: mkdtempSync(join(tmpdir(), 'parley-aq-')), sync: 'normal' });
  queue = new AppendQueue(store.messages, 64);
});
afterEach(() => store.close());

function msg(over: Partial<NewMessage> = {}): NewMessage {
  return {
    channelId: 'g',
    channelType: 2,
    messageId: nextId++,
    clientMsgNo: '',
    fromUid: 'u',
    setting: 0,
    flags: 0,
    expire: 0,
    topic: '',
    createdAt: Date.now(),
    payload: Buffer.from('p'),
    ...over,
  };
}

describe('AppendQueue', () => {
  it('numbers each channel 1, 2, 3 … in send order across batches', async () => {
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => queue.append(msg({ channelId: i % 2 ? 'a' : 'b' }), true)));
    const seqsA = results.filter((_, i) => i % 2).map((r) => (r.kind === 'appended' ? r.messageSeq : -1));
    expect(seqsA).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(queue.stats.batches).toBeGreaterThanOrEqual(4);
    expect(await store.messages.loadTail('a', 2)).toBe(100);
  });

  it('coalesces a repeated client_msg_no inside one batch and across batches', async () => {
    const [a, b] = await Promise.all([queue.append(msg({ clientMsgNo: 'k' }), true), queue.append(msg({ clientMsgNo: 'k' }), true)]);
    expect(a).toMatchObject({ kind: 'appended', messageSeq: 1 });
    expect(b).toEqual({ kind: 'duplicate', messageId: (a as { messageId: bigint }).messageId, messageSeq: 1 });
    const later = await queue.append(msg({ clientMsgNo: 'k' }), true);
    expect(later).toEqual(b);
    const other = await queue.append(msg({ clientMsgNo: 'k', fromUid: 'v' }), true);
    expect(other).toMatchObject({ kind: 'appended', messageSeq: 2 });
  });

  it('numbers a batch mixing earlier keys and new sends without a gap, and marks only what it appended', async () => {
    await store.memberships.addMembers('g', 2, ['u'], 1);
    const first = await queue.append(msg({ clientMsgNo: 'k1' }), true);
    await queue.append(msg({ clientMsgNo: 'k2' }), true);
    // One batch: a new send, a repeat of k1, a reuse of k2 with another payload, another new send.
    const [n1, again, clash, n2] = await Promise.all([
      queue.append(msg({ clientMsgNo: 'k3' }), true),
      queue.append(msg({ clientMsgNo: 'k1' }), true),
      queue.append(msg({ clientMsgNo: 'k2', payload: Buffer.from('other') }), true),
      queue.append(msg({ clientMsgNo: 'k4' }), false),
    ]);
    expect(again).toEqual({ kind: 'duplicate', messageId: (first as { messageId: bigint }).messageId, messageSeq: 1 });
    expect(clash).toEqual({ kind: 'conflict' });
    expect([n1, n2]).toMatchObject([
      { kind: 'appended', messageSeq: 3 },
      { kind: 'appended', messageSeq: 4 },
    ]);
    const { messages } = await store.messages.range('g', 2, 1, 10, 10, false);
    expect(messages.map((m) => [m.messageSeq, m.clientMsgNo])).toEqual([
      [1, 'k1'],
      [2, 'k2'],
      [3, 'k3'],
      [4, 'k4'],
    ]);
    // k4 was sent unmarked: the sender's latest marked send is k3.
    expect((await store.memberships.get('g', 2, 'u'))?.lastSendSeq).toBe(3);
  });

  it('in one batch, tells a repeat (same channel, sender and client_msg_no) from other sends sharing the client_msg_no, and marks each sender once', async () => {
    await store.memberships.addMembers('g', 2, ['u', 'v'], 1);
    await store.memberships.addMembers('h', 2, ['u'], 1);
    const all = await Promise.all([
      queue.append(msg({ clientMsgNo: 'k' }), true), // g/u: 1
      queue.append(msg({ clientMsgNo: 'k', fromUid: 'v' }), true), // g/v: 2
      queue.append(msg({ clientMsgNo: 'k', channelId: 'h' }), true), // h/u: 1
      queue.append(msg({ clientMsgNo: 'k', fromUid: 'v' }), true), // repeat of g/v
      queue.append(msg({ clientMsgNo: 'k', channelId: 'h', payload: Buffer.from('other') }), true), // h/u reused
      queue.append(msg({ clientMsgNo: 'j' }), true), // g/u: 3
      queue.append(msg({ clientMsgNo: 'k' }), true), // repeat of g/u
    ]);
    expect(queue.stats.batches).toBe(1);
    const id = (r: (typeof all)[number]) => (r as { messageId: bigint }).messageId;
    expect(all).toEqual([
      { kind: 'appended', messageId: id(all[0]!), messageSeq: 1 },
      { kind: 'appended', messageId: id(all[1]!), messageSeq: 2 },
      { kind: 'appended', messageId: id(all[2]!), messageSeq: 1 },
      { kind: 'duplicate', messageId: id(all[1]!), messageSeq: 2 },
      { kind: 'conflict' },
      { kind: 'appended', messageId: id(all[5]!), messageSeq: 3 },
      { kind: 'duplicate', messageId: id(all[0]!), messageSeq: 1 },
    ]);
    expect((await store.memberships.get('g', 2, 'u'))?.lastSendSeq).toBe(3);
    expect((await store.memberships.get('g', 2, 'v'))?.lastSendSeq).toBe(2);
    expect((await store.memberships.get('h', 2, 'u'))?.lastSendSeq).toBe(1);
  });

  it('in one busy channel (more senders and keys than it compares one by one), tells repeats and marks each sender at its last send', async () => {
    const senders = Array.from({ length: 12 }, (_, i) => `s${i}`);
    await store.memberships.addMembers('busy', 2, senders, 1);
    const send = (fromUid: string, clientMsgNo: string, payload = Buffer.from('p')) =>
      queue.append(msg({ channelId: 'busy', fromUid, clientMsgNo, payload }), true);
    const id = (r: AppendResult | undefined) => (r as { messageId: bigint }).messageId;
    const seqs = (rs: AppendResult[]) => rs.map((r) => (r.kind === 'appended' ? r.messageSeq : -1));
    const lastSends = () => Promise.all(senders.map(async (uid) => (await store.memberships.get('busy', 2, uid))?.lastSendSeq));

    // One batch: keys a and b from every sender, a again from every sender, b reused by s3 with another payload.
    const first = await Promise.all([
      ...senders.map((uid) => send(uid, 'a')),
      ...senders.map((uid) => send(uid, 'b')),
      ...senders.map((uid) => send(uid, 'a')),
      send('s3', 'b', Buffer.from('other')),
    ]);
    expect(queue.stats.batches).toBe(1);
    expect(seqs(first.slice(0, 24))).toEqual(Array.from({ length: 24 }, (_, i) => i + 1));
    expect(first.slice(24, 36)).toEqual(senders.map((_, i) => ({ kind: 'duplicate', messageId: id(first[i]), messageSeq: i + 1 })));
    expect(first[36]).toEqual({ kind: 'conflict' });
    expect(await lastSends()).toEqual(senders.map((_, i) => 13 + i));

    // The next batch: b again from every sender (durable now: planned again once the store finds them), and a new key c.
    const second = await Promise.all([...senders.map((uid) => send(uid, 'b')), ...senders.map((uid) => send(uid, 'c'))]);
    expect(queue.stats.batches).toBe(2);
    expect(second.slice(0, 12)).toEqual(senders.map((_, i) => ({ kind: 'duplicate', messageId: id(first[12 + i]), messageSeq: 13 + i })));
    expect(seqs(second.slice(12))).toEqual(Array.from({ length: 12 }, (_, i) => 25 + i));
    expect(await lastSends()).toEqual(senders.map((_, i) => 25 + i));
    expect(await store.messages.loadTail('busy', 2)).toBe(36);
  });

  it('holds at most maxTails tails, the oldest dropped first; a dropped or forgotten channel reads its tail again', async () => {
    const small = new AppendQueue(store.messages, 64, 3);
    const other = new AppendQueue(store.messages, 64);
    for (const id of ['a', 'b', 'c', 'd']) await small.append(msg({ channelId: id }), true);
    expect(small.activeChannels).toBe(3);
    // 'a' was dropped (the oldest): another writer's append to it is seen.
    await other.append(msg({ channelId: 'a' }), true);
    expect(await small.append(msg({ channelId: 'a' }), true)).toMatchObject({ kind: 'appended', messageSeq: 3 });
    expect(small.activeChannels).toBe(3);
    // A forgotten channel (cluster mode: its slot changed owner) likewise.
    small.forgetTails((id) => id === 'd');
    expect(small.activeChannels).toBe(2);
    await other.append(msg({ channelId: 'd' }), true);
    expect(await small.append(msg({ channelId: 'd' }), true)).toMatchObject({ kind: 'appended', messageSeq: 3 });
    // 'c' stayed held.
    expect(await small.append(msg({ channelId: 'c' }), true)).toMatchObject({ kind: 'appended', messageSeq: 2 });
    expect(await small.tail('c', 2)).toBe(2);
    expect(small.activeChannels).toBe(3);
  });

  it('holds tails within maxTailChars of channel ids too, the oldest dropped first', async () => {
    const small = new AppendQueue(store.messages, 64, 100, COMMIT_WINDOW_MS, 250);
    const other = new AppendQueue(store.messages, 64);
    const long = (c: string) => c.repeat(100);
    for (const c of ['a', 'b', 'c']) await small.append(msg({ channelId: long(c) }), true);
    // Three ids of 100 characters exceed 250: the oldest went.
    expect(small.tailsHeld).toEqual({ count: 2, chars: 200 });
    await other.append(msg({ channelId: long('a') }), true);
    expect(await small.append(msg({ channelId: long('a') }), true)).toMatchObject({ kind: 'appended', messageSeq: 3 });
    expect(small.tailsHeld).toEqual({ count: 2, chars: 200 });
    small.forgetTails(() => true);
    expect(small.tailsHeld).toEqual({ count: 0, chars: 0 });
  });

  it('refuses a reused client_msg_no with a different payload and writes nothing for it', async () => {
    await queue.append(msg({ clientMsgNo: 'x' }), true);
    expect(await queue.append(msg({ clientMsgNo: 'x', payload: Buffer.from('other') }), true)).toEqual({ kind: 'conflict' });
    expect(await store.messages.loadTail('g', 2)).toBe(1);
  });

  it('keeps 64-bit ids exact through the store', async () => {
    const id = 2_124_331_629_039_063_041n;
    await queue.append(msg({ messageId: id }), true);
    const { messages } = await store.messages.range('g', 2, 1, 10, 10, false);
    expect(messages[0]!.messageId).toBe(id);
  });

  it('hands the store rows of one shape, fields in column order, whatever the key order of the messages it was given', async () => {
    const handed: StoredMessage[] = [];
    const checked = store.messages.appendChecked!;
    store.messages.appendChecked = (rows, marks) => {
      handed.push(...rows);
      return checked(rows, marks);
    };
    // Two messages: one with NewMessage's keys in their declared order, one with them reversed.
    const m = msg({ clientMsgNo: 'a' });
    const reversed = Object.fromEntries(Object.entries(msg({ clientMsgNo: 'b' })).reverse()) as unknown as NewMessage;
    const [a, b] = await Promise.all([queue.append(m, true), queue.append(reversed, true)]);
    expect([a, b]).toMatchObject([
      { kind: 'appended', messageSeq: 1 },
      { kind: 'appended', messageSeq: 2 },
    ]);
    const columns = [
      'channelId',
      'channelType',
      'messageSeq',
      'messageId',
      'clientMsgNo',
      'fromUid',
      'setting',
      'flags',
      'expire',
      'topic',
      'createdAt',
      'payload',
    ];
    expect(handed.map((r) => Object.keys(r))).toEqual([columns, columns]);
    expect(handed[1]).toEqual(storedRow(reversed, 2));
  });

  it('makes the memberships a fenced batch brings in its own transaction: with its rows, or none with a stale fence', async () => {
    const lease = (await store.leases.acquire(5, 1, 60_000))!;
    let epoch = lease.epoch;
    queue.fenceOf = () => ({ slot: 5, epoch });
    const pair = (channelId: string): EnsuredMember[] => [
      { channelId, channelType: 1, uid: 'amy' },
      { channelId, channelType: 1, uid: 'ben' },
    ];
    // Two sends of a new person channel in one batch, each bringing the pair.
    const sent = await Promise.all([
      queue.append(msg({ channelId: 'p1', channelType: 1, fromUid: 'amy' }), true, pair('p1')),
      queue.append(msg({ channelId: 'p1', channelType: 1, fromUid: 'amy' }), true, pair('p1')),
    ]);
    expect(sent.map((r) => r.kind)).toEqual(['appended', 'appended']);
    expect(await store.memberships.get('p1', 1, 'amy')).toMatchObject({ joinSeq: 1, lastSendSeq: 2 });
    expect(await store.memberships.get('p1', 1, 'ben')).toMatchObject({ joinSeq: 1, lastSendSeq: 0 });
    epoch += 1;
    await expect(queue.append(msg({ channelId: 'p2', channelType: 1, fromUid: 'amy' }), true, pair('p2'))).rejects.toBeInstanceOf(
      StaleEpochError,
    );
    expect(await store.memberships.get('p2', 1, 'amy')).toBeUndefined();
    expect(await store.memberships.get('p2', 1, 'ben')).toBeUndefined();
  });

  it('resumes above the committed tail in a new queue (as after a restart)', async () => {
    const fresh = new AppendQueue(store.messages, 8);
    await fresh.append(msg(), true);
    await fresh.append(msg(), true);
    const again = new AppendQueue(store.messages, 8);
    expect(await again.append(msg(), true)).toMatchObject({ messageSeq: 3 });
  });

  it('resumes each channel of a batch above its own committed tail (their tails read together)', async () => {
    const fresh = new AppendQueue(store.messages, 64);
    const counts = { a: 3, b: 1, c: 5 };
    for (const [channelId, n] of Object.entries(counts)) {
      await Promise.all(Array.from({ length: n }, () => fresh.append(msg({ channelId }), true)));
    }
    const again = new AppendQueue(store.messages, 64);
    const loads = vi.spyOn(store.messages, 'loadTails');
    const results = await Promise.all(['c', 'new', 'a', 'b', 'a'].map((channelId) => again.append(msg({ channelId }), true)));
    expect(results.map((r) => (r.kind === 'appended' ? r.messageSeq : -1))).toEqual([6, 1, 4, 2, 5]);
    expect(loads).toHaveBeenCalledTimes(1);
  });

  it('appendThen: each send gets exactly one callback, after its row is durable; a failed batch calls `failed` once each', async () => {
    const calls: string[] = [];
    const done = new Promise<void>((resolve) => {
      let left = 3;
      const seen = (what: string) => {
        calls.push(what);
        if (--left === 0) resolve();
      };
      for (const no of ['a', 'b', 'a'])
        queue.appendThen(
          msg({ clientMsgNo: no }),
          true,
          (r) => seen(`${no}:${r.kind}:${'messageSeq' in r ? r.messageSeq : 0}`),
          () => seen(`${no}:failed`),
        );
    });
    await done;
    expect(calls).toEqual(['a:appended:1', 'b:appended:2', 'a:duplicate:1']);
    expect(await store.messages.loadTail('g', 2)).toBe(2);

    const boom = new Error('disk gone');
    const checked = store.messages.appendChecked;
    store.messages.appendChecked = () => Promise.reject(boom);
    const failed: unknown[] = [];
    await new Promise<void>((resolve) => {
      for (let i = 0; i < 2; i++)
        queue.appendThen(
          msg(),
          true,
          () => failed.push('settled'),
          (err) => (failed.push(err), failed.length === 2 && resolve()),
        );
    });
    await queue.drain();
    expect(failed).toEqual([boom, boom]);
    store.messages.appendChecked = checked;
    expect(await queue.append(msg(), true)).toMatchObject({ kind: 'appended', messageSeq: 3 });
  });

  it('settles a batch mixing `append` and `appendThen` in batch order (what each sender does next keeps the seq order)', async () => {
    const order: number[] = [];
    const all: Promise<unknown>[] = [];
    for (let i = 0; i < 6; i++) {
      if (i % 2 === 0) all.push(queue.append(msg(), true).then((r) => void order.push(r.kind === 'appended' ? r.messageSeq : -1)));
      else
        all.push(
          new Promise<void>((resolve) =>
            queue.appendThen(
              msg(),
              true,
              (r) => resolve(void order.push(r.kind === 'appended' ? r.messageSeq : -1)),
              () => resolve(void order.push(-2)),
            ),
          ),
        );
    }
    await Promise.all(all);
    expect(order).toEqual([1, 2, 3, 4, 5, 6]);
  });
});

/** An arrival rate in messages per ms. */
const perMs = (perSecond: number) => perSecond / 1000;

describe('commitWindowMs', () => {
  it('gathers 24 sends at moderate rates, waiting at most 8 ms', () => {
    expect(commitWindowMs(perMs(50))).toBe(8);
    expect(commitWindowMs(perMs(2000))).toBe(8);
    expect(commitWindowMs(perMs(3000))).toBe(8);
    expect(commitWindowMs(perMs(3500))).toBeCloseTo(24 / 3.5, 9);
  });

  it('waits 6 ms from 4k msg/s up to 16k', () => {
    expect(commitWindowMs(perMs(4000))).toBe(6);
    expect(commitWindowMs(perMs(5000))).toBe(6);
    expect(commitWindowMs(perMs(16000))).toBe(6);
  });

  it('shortens the window above 16k msg/s to the time 96 sends take', () => {
    expect(commitWindowMs(perMs(24000))).toBe(4);
    expect(commitWindowMs(perMs(48000))).toBe(2);
  });

  it('uses the plain window while the rate is unknown', () => {
    expect(commitWindowMs(0)).toBe(6);
    expect(commitWindowMs(Number.NaN)).toBe(6);
    expect(commitWindowMs(0, 8)).toBe(8);
    expect(commitWindowMs(perMs(48000), 6)).toBe(2);
  });
});

describe('commitQuietMs', () => {
  it('ends a window after a pause of six mean spacings, never shorter than 3 ms', () => {
    expect(commitQuietMs(perMs(1000))).toBe(6);
    expect(commitQuietMs(perMs(2000))).toBe(3);
    expect(commitQuietMs(perMs(5000))).toBe(3);
    expect(commitQuietMs(perMs(500))).toBe(12);
    expect(commitQuietMs(0)).toBe(3);
    expect(commitQuietMs(Number.NaN)).toBe(3);
  });
});

describe('AppendQueue commit window', () => {
  /** Sends queued so far, committed: resolves when every one of them is. */
  const sendAll = (q: AppendQueue, n: number) => Promise.all(Array.from({ length: n }, () => q.append(msg(), true)));

  it('commits a burst once sends stop arriving, without waiting for the rest of a long window', async () => {
    // A one-second window: only the pause in arrivals can end it early.
    const q = new AppendQueue(store.messages, 512, 100_000, 1000);
    await sendAll(q, 16); // the first commit after idle: at once, 16 sends
    const started = performance.now();
    // 8 sends in flight (fewer than the last commit carried, so only the pause ends the window),
    // then nothing until they are acknowledged.
    await sendAll(q, 8);
    expect(performance.now() - started).toBeLessThan(500);
    expect(q.stats.batches).toBe(2);
  });

  it('commits at once when as many sends wait as recent commits carried', async () => {
    const q = new AppendQueue(store.messages, 512, 100_000, 1000);
    await sendAll(q, 16); // the first commit after idle: at once, 16 sends
    const again: Promise<unknown>[] = [];
    // The clock stands still: only what is due now runs (the window is a second, the quiet time 3 ms).
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'performance'] });
    try {
      for (let i = 0; i < 15; i++) again.push(q.append(msg(), true));
      vi.advanceTimersByTime(0);
      expect(q.depth).toBe(15);
      again.push(q.append(msg(), true));
      vi.advanceTimersByTime(0);
      expect(q.depth).toBe(0);
    } finally {
      vi.useRealTimers();
    }
    await Promise.all(again);
    expect(q.stats.batches).toBe(2);
  });

  it('keeps gathering while sends keep arriving, up to the window', async () => {
    const q = new AppendQueue(store.messages, 512, 100_000, 60);
    // One commit of 100 first: the 80 paced sends below never refill that many, so only a
    // pause of the quiet time (3 ms at this rate) could end their window early.
    await sendAll(q, 100);
    const pending: Promise<unknown>[] = [];
    // Two sends per ms for 40 ms, checked every event-loop turn: arrivals never pause for 3 ms,
    // and at this rate the window is the full 60 ms (96 sends would take 48).
    const start = performance.now();
    await new Promise<void>((done) => {
      const tick = () => {
        const due = Math.min(80, Math.floor((performance.now() - start) * 2));
        while (pending.length < due) pending.push(q.append(msg(), true));
        if (pending.length < 80) setImmediate(tick);
        else done();
      };
      tick();
    });
    await Promise.all(pending);
    // Committed as they came, they would take a commit each or a few; a stall of the test
    // process longer than the quiet time may end one window early.
    expect(q.stats.batches - 1).toBeLessThanOrEqual(4);
  });
});
