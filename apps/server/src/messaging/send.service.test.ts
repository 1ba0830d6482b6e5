import { ChannelType, normalizePersonChannel, personParticipants, ReasonCode } from '@parley/shared';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { messagingKit, recordingSession, type MessagingKit } from '../../test/messaging-kit.ts';
import {
  PERSON_DIRECTORY_CHARS_MAX,
  PERSON_TARGET_CHARS_MAX,
  PERSON_TARGETS_MAX,
  personPair,
  SEND_REFUSALS,
  type SendOutcome,
} from './send.service.ts';

let k: MessagingKit;
beforeEach(async () => {
  k = await messagingKit();
});
afterEach(() => k.close());

/** The canonical id of the person channel of alice and bob (WuKongIM orders the two uids by hash). */
const AB = normalizePersonChannel('alice', 'bob')!;

/** The reason and ids of a send's outcome (without the delivery a send that appended carries). */
const idsOf = ({ reason, messageId, messageSeq }: SendOutcome) => ({ reason, messageId, messageSeq });

/** The stored messages of a channel, oldest first. */
const stored = async (channelId: string, channelType: number) =>
  (await k.store.messages.range(channelId, channelType, 1, Number.MAX_SAFE_INTEGER, 100, false)).messages;

describe('SendService: person channels', () => {
  it('stores under the canonical id, answers only after the commit, and delivers to the peer but not the sending session', async () => {
    const mine = recordingSession('alice');
    const other = recordingSession('alice', 2);
    const peer = recordingSession('bob');
    for (const s of [mine, other, peer]) k.presence.add(s);
    const r = await k.sendText('alice', 'bob', ChannelType.Person, 'hi', { session: mine });
    expect(r).toMatchObject({ reason: ReasonCode.Success, messageSeq: 1 });
    expect(r.messageId).toBeGreaterThan(0n);
    // durable before the answer: the row is there as soon as the promise settles
    const rows = await stored(AB, ChannelType.Person);
    expect(rows.map((m) => [m.messageSeq, m.messageId, Buffer.from(m.payload).toString()])).toEqual([[1, r.messageId, 'hi']]);
    await k.queue.drain();
    expect(peer.delivered.map((d) => d.channelIdFor('bob'))).toEqual(['alice']);
    expect(other.delivered).toHaveLength(1);
    expect(mine.delivered).toEqual([]);
  });

  it('makes both participants members (the person directory) with the first message', async () => {
    await k.sendText('bob', 'alice', ChannelType.Person, 'first');
    for (const uid of ['alice', 'bob'])
      expect(await k.store.memberships.get(AB, ChannelType.Person, uid)).toMatchObject({ joinSeq: 1, removed: false });
    expect((await k.store.memberships.get(AB, ChannelType.Person, 'bob'))?.lastSendSeq).toBe(1);
  });

  it('resolves a person channel once per sender and id given, in either form, keeping at most PERSON_TARGETS_MAX', async () => {
    const seqs = [];
    for (const [from, given] of [
      ['alice', 'bob'],
      ['alice', 'bob'],
      ['alice', 'alice@bob'],
      ['alice', 'bob@alice'],
      ['bob', 'alice'],
    ] as const) {
      seqs.push((await k.sendText(from, given, ChannelType.Person, 'hi')).messageSeq);
    }
    expect(seqs).toEqual([1, 2, 3, 4, 5]);
    expect((await stored(AB, ChannelType.Person)).map((m) => m.fromUid)).toEqual(['alice', 'alice', 'alice', 'alice', 'bob']);
    expect(k.send.personTargetsHeld.count).toBe(4);
    // An invalid id is refused and not kept.
    expect((await k.sendText('alice', 'x@y', ChannelType.Person, 'hi')).reason).toBe(ReasonCode.PayloadDecodeError);
    expect(k.send.personTargetsHeld.count).toBe(4);
    // Past the bound the cache starts over; sends resolve as before.
    const resolve = (k.send as unknown as { personTarget(from: string, given: string): unknown }).personTarget.bind(k.send);
    for (let i = 0; i < PERSON_TARGETS_MAX; i++) resolve('carol', `peer${i}`);
    expect(k.send.personTargetsHeld.count).toBe(4);
    expect((await k.sendText('bob', 'alice', ChannelType.Person, 'hi')).messageSeq).toBe(6);
    expect(k.send.personTargetsHeld.count).toBe(5);
    // Long ids (a WKProto client may send 32,767 bytes) start it over by their characters, well before the count.
    const long = (i: number) => `${'p'.repeat(30_000)}${i}`;
    for (let i = 0; i < 200; i++) resolve('dave', long(i));
    const held = k.send.personTargetsHeld;
    expect(held.chars).toBeLessThanOrEqual(PERSON_TARGET_CHARS_MAX);
    expect(held.count).toBeLessThan(200);
    expect(held.count).toBeGreaterThan(0);
    expect((await k.sendText('alice', 'bob', ChannelType.Person, 'hi')).messageSeq).toBe(7);
  });

  it('remembers person channels with their members within PERSON_DIRECTORY_CHARS_MAX characters of ids', async () => {
    await k.sendText('alice', 'bob', ChannelType.Person, 'first');
    expect(k.send.personDirectoryHeld).toEqual({ count: 1, chars: AB.length });
    const remember = (k.send as unknown as { rememberPerson(id: string): void }).rememberPerson.bind(k.send);
    for (let i = 0; i < 200; i++) remember(`${'p'.repeat(30_000)}${i}`);
    const held = k.send.personDirectoryHeld;
    expect(held.chars).toBeLessThanOrEqual(PERSON_DIRECTORY_CHARS_MAX);
    expect(held.count).toBeGreaterThan(0);
    expect(held.count).toBeLessThan(200);
    // Starting over forgets alice@bob: its next message makes sure of the members again (both still are).
    expect((await k.sendText('bob', 'alice', ChannelType.Person, 'again')).messageSeq).toBe(2);
    for (const uid of ['alice', 'bob']) expect(await k.store.memberships.get(AB, ChannelType.Person, uid)).toMatchObject({ joinSeq: 1 });
  });

  it('refuses a malformed person id with reason 9 and the invalid-channel-id refusal', async () => {
    const r = await k.sendText('alice', 'x@y', ChannelType.Person, 'hi');
    expect(r).toEqual({ reason: ReasonCode.PayloadDecodeError, messageId: 0n, messageSeq: 0, refusal: SEND_REFUSALS.invalidChannelId });
  });
});

describe('SendService: idempotency and request shape', () => {
  it('returns the original ids for a repeated client_msg_no with the same payload, and refuses another payload', async () => {
    const first = await k.sendText('alice', 'bob', ChannelType.Person, 'hi', { clientMsgNo: 'c1' });
    const again = await k.sendText('alice', 'bob', ChannelType.Person, 'hi', { clientMsgNo: 'c1' });
    expect(idsOf(again)).toEqual(idsOf(first));
    // The send that appended carries its delivery (whose id text a JSON-RPC SENDACK reuses); the repeat appended nothing.
    expect(first.delivery?.messageId).toBe(first.messageId);
    expect(first.delivery?.messageIdText).toBe(first.messageId.toString());
    expect(again.delivery).toBeUndefined();
    const other = await k.sendText('alice', 'bob', ChannelType.Person, 'changed', { clientMsgNo: 'c1' });
    expect(other).toMatchObject({ reason: ReasonCode.SystemError, refusal: SEND_REFUSALS.idempotencyConflict });
    expect(await stored(AB, ChannelType.Person)).toHaveLength(1);
  });

  it('refuses an empty sender (auth) and an empty channel or payload (decode), storing nothing', async () => {
    expect(await k.sendText('', 'bob', ChannelType.Person, 'hi')).toMatchObject({
      reason: ReasonCode.AuthFail,
      refusal: SEND_REFUSALS.invalidRequest,
    });
    expect((await k.sendText('alice', '', ChannelType.Group, 'hi')).reason).toBe(ReasonCode.PayloadDecodeError);
    expect((await k.sendText('alice', 'bob', ChannelType.Person, '')).reason).toBe(ReasonCode.PayloadDecodeError);
    expect(k.send.stats).toEqual({ sends: 3, acks: 0, ackErrors: 3, fanoutErrors: 0 });
  });

  it('a permission refusal carries its reason and no refusal (the HTTP API answers it as a 200 with the reason)', async () => {
    const r = await k.sendText('alice', 'no-such-group', ChannelType.Group, 'hi');
    expect(r).toEqual({ reason: ReasonCode.ChannelNotExist, messageId: 0n, messageSeq: 0 });
  });
});

describe('SendService: groups, commands and transient messages', () => {
  beforeEach(async () => {
    await k.channels.upsert('g1', ChannelType.Group, {});
    await k.channels.addSubscribers('g1', ChannelType.Group, ['alice', 'bob', 'carol']);
  });

  it('numbers a group channel 1, 2, 3 and delivers to every online subscriber', async () => {
    const bob = recordingSession('bob');
    k.presence.add(bob);
    const seqs = [];
    for (const text of ['a', 'b', 'c']) seqs.push((await k.sendText('alice', 'g1', ChannelType.Group, text)).messageSeq);
    expect(seqs).toEqual([1, 2, 3]);
    await k.queue.drain();
    expect(bob.delivered.map((d) => d.messageSeq)).toEqual([1, 2, 3]);
  });

  it('keeps a command (`____cmd` suffix or sync_once) in the channel command log, delivered as sync_once', async () => {
    const bob = recordingSession('bob');
    k.presence.add(bob);
    const r = await k.sendText('alice', 'g1____cmd', ChannelType.Group, 'cmd');
    expect(r.messageSeq).toBe(1);
    expect(await stored('g1____cmd', ChannelType.Group)).toHaveLength(1);
    expect(await stored('g1', ChannelType.Group)).toHaveLength(0);
    await k.queue.drain();
    expect(bob.delivered.map((d) => [d.channelId, d.syncOnce])).toEqual([['g1', true]]);
  });

  it('delivers a no_persist message without storing it (seq 0)', async () => {
    const bob = recordingSession('bob');
    k.presence.add(bob);
    const r = await k.sendText('alice', 'g1', ChannelType.Group, 'typing', { noPersist: true, syncOnce: true });
    expect(r.messageSeq).toBe(0);
    expect(r.messageId).toBeGreaterThan(0n);
    await k.queue.drain();
    expect(await stored('g1', ChannelType.Group)).toEqual([]);
    expect(bob.delivered.map((d) => d.messageSeq)).toEqual([0]);
  });

  it('request-scoped sends reach exactly the listed uids and need sync_once and no channel', async () => {
    const [bob, carol] = [recordingSession('bob'), recordingSession('carol')];
    k.presence.add(bob);
    k.presence.add(carol);
    const ok = await k.sendText('svc', '', 0, 'x', { subscribers: ['bob', ' bob '], syncOnce: true });
    expect(ok.reason).toBe(ReasonCode.Success);
    await k.queue.drain();
    expect(bob.delivered).toHaveLength(1);
    expect(carol.delivered).toEqual([]);
    expect((await k.sendText('svc', '', 0, 'x', { subscribers: ['bob'] })).refusal).toBe(SEND_REFUSALS.subscribersNeedSyncOnce);
    expect((await k.sendText('svc', 'g1', 2, 'x', { subscribers: ['bob'], syncOnce: true })).refusal).toBe(
      SEND_REFUSALS.subscribersWithChannel,
    );
    expect((await k.sendText('svc', '', 0, 'x', { subscribers: [' '], syncOnce: true })).refusal).toBe(SEND_REFUSALS.subscribersRequired);
  });
});

describe("SendService.submit (the gateways' entry)", () => {
  /** Counts the sends that went through the promise API of the queue (the async path). */
  function countPromiseAppends(): { n: number } {
    const count = { n: 0 };
    const append = k.queue.append.bind(k.queue);
    k.queue.append = (m, markSend, members) => {
      count.n++;
      return append(m, markSend, members);
    };
    return count;
  }

  it('answers after the commit with the outcome `send` gives; a known person channel takes no promise path', async () => {
    const viaPromise = countPromiseAppends();
    const peer = recordingSession('bob');
    k.presence.add(peer);
    // The channel's first message loads its state for the permission check (async); its append
    // brings both participants' memberships. The next ones are the common path.
    const first = await k.submitText('alice', 'bob', ChannelType.Person, 'one');
    expect(viaPromise.n).toBe(1);
    for (const uid of ['alice', 'bob']) expect(await k.store.memberships.get(AB, ChannelType.Person, uid)).toMatchObject({ joinSeq: 1 });
    const second = await k.submitText('alice', 'bob', ChannelType.Person, 'two');
    const third = await k.submitText('bob', 'alice', ChannelType.Person, 'three', { session: peer });
    expect(viaPromise.n).toBe(1);
    expect([first, second, third].map((r) => ('settled' in r ? [r.settled.reason, r.settled.messageSeq] : r))).toEqual([
      [ReasonCode.Success, 1],
      [ReasonCode.Success, 2],
      [ReasonCode.Success, 3],
    ]);
    // durable when answered
    const rows = await stored(AB, ChannelType.Person);
    expect(rows.map((m) => [m.messageSeq, m.messageId, Buffer.from(m.payload).toString()])).toEqual([
      [1, (first as { settled: SendOutcome }).settled.messageId, 'one'],
      [2, (second as { settled: SendOutcome }).settled.messageId, 'two'],
      [3, (third as { settled: SendOutcome }).settled.messageId, 'three'],
    ]);
    expect(peer.delivered.map((d) => d.messageSeq)).toEqual([1, 2]);
    expect((await k.store.memberships.get(AB, ChannelType.Person, 'bob'))?.lastSendSeq).toBe(3);
    expect(k.send.stats).toEqual({ sends: 3, acks: 3, ackErrors: 0, fanoutErrors: 0 });
  });

  it('keeps idempotency on the common path: the same client_msg_no answers the original ids, another payload the conflict', async () => {
    await k.submitText('alice', 'bob', ChannelType.Person, 'warm');
    const viaPromise = countPromiseAppends();
    const first = await k.submitText('alice', 'bob', ChannelType.Person, 'hi', { clientMsgNo: 'c1' });
    const again = await k.submitText('alice', 'bob', ChannelType.Person, 'hi', { clientMsgNo: 'c1' });
    const other = await k.submitText('alice', 'bob', ChannelType.Person, 'changed', { clientMsgNo: 'c1' });
    expect(viaPromise.n).toBe(0);
    expect('settled' in again && idsOf(again.settled)).toEqual('settled' in first && idsOf(first.settled));
    expect(other).toEqual({
      settled: { reason: ReasonCode.SystemError, messageId: 0n, messageSeq: 0, refusal: SEND_REFUSALS.idempotencyConflict },
    });
    expect(await stored(AB, ChannelType.Person)).toHaveLength(2);
    expect(k.send.stats).toEqual({ sends: 4, acks: 3, ackErrors: 1, fanoutErrors: 0 });
  });

  it('answers refusals as `send` does (the async path), storing nothing', async () => {
    expect(await k.submitText('alice', 'no-such-group', ChannelType.Group, 'hi')).toEqual({
      settled: { reason: ReasonCode.ChannelNotExist, messageId: 0n, messageSeq: 0 },
    });
    expect(await k.submitText('', 'bob', ChannelType.Person, 'hi')).toEqual({
      settled: { reason: ReasonCode.AuthFail, messageId: 0n, messageSeq: 0, refusal: SEND_REFUSALS.invalidRequest },
    });
    expect(await k.submitText('alice', 'x@y', ChannelType.Person, 'hi')).toEqual({
      settled: { reason: ReasonCode.PayloadDecodeError, messageId: 0n, messageSeq: 0, refusal: SEND_REFUSALS.invalidChannelId },
    });
    expect(k.send.stats).toEqual({ sends: 3, acks: 0, ackErrors: 3, fanoutErrors: 0 });
  });

  it('hands a failed commit to `failed` once, and counts it as an ack error', async () => {
    await k.submitText('alice', 'bob', ChannelType.Person, 'warm');
    const viaPromise = countPromiseAppends();
    const boom = new Error('disk gone');
    k.store.messages.appendChecked = () => Promise.reject(boom);
    expect(await k.submitText('alice', 'bob', ChannelType.Person, 'lost')).toEqual({ failed: boom });
    expect(viaPromise.n).toBe(0);
    expect(await stored(AB, ChannelType.Person)).toHaveLength(1);
    expect(k.send.stats).toEqual({ sends: 2, acks: 1, ackErrors: 1, fanoutErrors: 0 });
  });
});

describe('SendService: a person channel keeps its permission while the channel states stay', () => {
  /** Counts the channel-state look-ups of the permission check (`ChannelCache.peek`). */
  function countPeeks(): { n: number } {
    const count = { n: 0 };
    const peek = k.cache.peek.bind(k.cache);
    k.cache.peek = (id, type) => {
      count.n++;
      return peek(id, type);
    };
    return count;
  }
  const reasonOf = (r: { settled: SendOutcome } | { failed: unknown }) => ('settled' in r ? r.settled.reason : r);

  it('looks nothing up once allowed, and answers every change of the three states (deny list, send ban, disband)', async () => {
    const peeks = countPeeks();
    expect(reasonOf(await k.submitText('alice', 'bob', ChannelType.Person, 'load'))).toBe(ReasonCode.Success);
    expect(reasonOf(await k.submitText('alice', 'bob', ChannelType.Person, 'check'))).toBe(ReasonCode.Success);
    peeks.n = 0;
    expect(reasonOf(await k.submitText('alice', 'bob', ChannelType.Person, 'kept'))).toBe(ReasonCode.Success);
    expect(reasonOf(await k.submitText('alice', 'alice@bob', ChannelType.Person, 'another id: its own check'))).toBe(ReasonCode.Success);
    expect(peeks.n).toBe(3);

    const expectReason = async (reason: number) => {
      // Twice: the first may load the changed state (async), the second takes the common path.
      for (let i = 0; i < 2; i++) expect(reasonOf(await k.submitText('alice', 'bob', ChannelType.Person, 'x'))).toBe(reason);
    };
    await k.channels.addToList('bob', ChannelType.Person, 'deny', ['alice']);
    await expectReason(ReasonCode.InBlacklist);
    await k.channels.removeFromList('bob', ChannelType.Person, 'deny', ['alice']);
    await expectReason(ReasonCode.Success);
    await k.channels.upsert('alice', ChannelType.Person, { sendBan: 1 });
    await expectReason(ReasonCode.SendBan);
    await k.channels.upsert('alice', ChannelType.Person, { sendBan: 0 });
    await expectReason(ReasonCode.Success);
    // A change to another channel moves the generation too: the next send checks again, and still may.
    await k.channels.upsert('carol', ChannelType.Person, {});
    peeks.n = 0;
    await expectReason(ReasonCode.Success);
    expect(peeks.n).toBe(3);
    // Disbanding is for good (an upsert does not undo it).
    await k.channels.upsert(AB, ChannelType.Person, { disband: 1 });
    await expectReason(ReasonCode.Disband);
  });

  it('keeps no answer that a system uid or the system device gave', async () => {
    await k.close();
    const systemUids = ['bob'];
    k = await messagingKit({ systemUids });
    await k.channels.addToList('bob', ChannelType.Person, 'deny', ['alice']);
    for (let i = 0; i < 2; i++)
      expect(reasonOf(await k.submitText('alice', 'bob', ChannelType.Person, 'to a system uid'))).toBe(ReasonCode.Success);
    systemUids.length = 0;
    expect(reasonOf(await k.submitText('alice', 'bob', ChannelType.Person, 'bob is a user again'))).toBe(ReasonCode.InBlacklist);
    const device = { deviceId: '____device' };
    for (let i = 0; i < 2; i++)
      expect(reasonOf(await k.submitText('alice', 'bob', ChannelType.Person, 'system device', device))).toBe(ReasonCode.Success);
    expect(reasonOf(await k.submitText('alice', 'bob', ChannelType.Person, 'a user device'))).toBe(ReasonCode.InBlacklist);
  });
});

describe('personPair', () => {
  it('names the participants as personParticipants splits the canonical id, whichever way the send named them', () => {
    const cases: Array<[string, string]> = [
      ['alice', 'bob'],
      ['bob', 'alice'],
      ['u1', 'u10'],
      ['u10', 'u1'],
      ['same', 'same'],
      ['alice', 'alice@bob'],
      ['alice', 'bob@alice'],
      ['a@x', 'bob'],
      ['bob', 'a@x@y'],
      ['中文', 'é'],
    ];
    for (const [from, given] of cases) {
      const canonical = normalizePersonChannel(from, given);
      if (!canonical) continue;
      expect(personPair(from, given, canonical)).toEqual(personParticipants(canonical));
    }
  });
});
