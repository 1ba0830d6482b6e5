import { ChannelType } from '@parley/shared';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { messagingKit, type MessagingKit } from '../../test/messaging-kit.ts';
import { DomainError } from '../errors.ts';
import { SyncService, type SyncRequest } from './sync.service.ts';

let k: MessagingKit;
let sync: SyncService;
let itemErrors: unknown[];
beforeEach(async () => {
  k = await messagingKit();
  itemErrors = [];
  sync = new SyncService(k.store, (err) => itemErrors.push(err));
  await k.channels.upsert('g1', ChannelType.Group, {});
  await k.channels.addSubscribers('g1', ChannelType.Group, ['alice', 'bob']);
  for (let i = 1; i <= 5; i++) await k.sendText('alice', 'g1', ChannelType.Group, `m${i}`);
});
afterEach(() => k.close());

const pull = (over: Partial<SyncRequest>) =>
  sync.pull({ loginUid: 'bob', channelId: 'g1', channelType: ChannelType.Group, startSeq: 0, endSeq: 0, limit: 0, pullMode: 0, ...over });
const seqs = (r: { messages: Array<{ message_seq: number }> }) => r.messages.map((m) => m.message_seq);

/** The DomainError `work` rejects with. */
async function refusal(work: Promise<unknown>): Promise<DomainError> {
  const err = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof DomainError)) throw new Error(`expected a DomainError, got ${String(err)}`);
  return err;
}

describe('SyncService.pull', () => {
  it('pulls down from the newest (mode 0) and up from a seq (mode 1), in ascending order, with more when bounded', async () => {
    expect(seqs(await pull({}))).toEqual([1, 2, 3, 4, 5]);
    expect(await pull({ limit: 2 })).toMatchObject({ more: 1, messages: [{ message_seq: 4 }, { message_seq: 5 }] });
    expect(seqs(await pull({ pullMode: 1, startSeq: 2, limit: 2 }))).toEqual([2, 3]);
    expect(seqs(await pull({ pullMode: 1, startSeq: 2, endSeq: 4 }))).toEqual([2, 3]);
    expect(seqs(await pull({ startSeq: 4, endSeq: 1 }))).toEqual([2, 3, 4]);
  });

  it('hides what came before a member joined', async () => {
    await k.channels.addSubscribers('g1', ChannelType.Group, ['carol']);
    await k.sendText('alice', 'g1', ChannelType.Group, 'm6');
    expect(seqs(await pull({ loginUid: 'carol' }))).toEqual([6]);
  });

  it('refuses a non-member, a removed member and a disbanded channel with sync_rejected', async () => {
    expect(await refusal(pull({ loginUid: 'mallory' }))).toMatchObject({
      code: 'sync_rejected',
      status: 400,
      message: 'internal/message: valid channel membership required',
    });
    await k.channels.removeSubscribers('g1', ChannelType.Group, ['bob']);
    expect((await refusal(pull({}))).message).toBe('internal/message: valid channel membership required');
    await k.channels.upsert('g1', ChannelType.Group, { disband: 1 });
    expect((await refusal(pull({ loginUid: 'alice' }))).message).toBe('internal/message: channel disbanded');
  });

  it('answers message ids exactly (bigint) and payloads as Base64', async () => {
    const [first] = (await pull({ limit: 1, pullMode: 1, startSeq: 1 })).messages;
    expect(typeof first!.message_id).toBe('bigint');
    expect(first!.message_idstr).toBe(first!.message_id.toString());
    expect(Buffer.from(first!.payload, 'base64').toString()).toBe('m1');
  });
});

describe('SyncService.pullBatch', () => {
  const item = (channelId: string): Omit<SyncRequest, 'loginUid'> => ({
    channelId,
    channelType: ChannelType.Group,
    startSeq: 0,
    endSeq: 0,
    limit: 0,
    pullMode: 0,
  });

  it('refuses the whole batch when one item may not be read', async () => {
    await k.channels.upsert('g2', ChannelType.Group, {});
    expect((await refusal(sync.pullBatch('bob', [item('g1'), item('g2')]))).code).toBe('sync_rejected');
  });

  it("answers an item that fails to read with 'internal error', never the failure's own text, and reports it", async () => {
    const broken = new Error('SQL logic error near "secret_table"');
    const failing = new SyncService(
      {
        ...k.store,
        messages: {
          ...k.store.messages,
          range: (channelId, ...rest) => (channelId === 'g2' ? Promise.reject(broken) : k.store.messages.range(channelId, ...rest)),
        },
      },
      (err) => itemErrors.push(err),
    );
    await k.channels.upsert('g2', ChannelType.Group, {});
    await k.channels.addSubscribers('g2', ChannelType.Group, ['bob']);
    const items = await failing.pullBatch('bob', [item('g1'), item('g2')]);
    expect(items.map((i) => [i.channel_id, i.messages.length, i.error])).toEqual([
      ['g1', 5, undefined],
      ['g2', 0, 'internal error'],
    ]);
    expect(itemErrors).toEqual([broken]);
  });
});

describe('SyncService.exact', () => {
  it('returns exactly the selected messages the caller may see, by id, seq and client message number', async () => {
    const all = (await pull({})).messages;
    await k.sendText('alice', 'g1', ChannelType.Group, 'm6', { clientMsgNo: 'c-6' });
    const r = await sync.exact({
      loginUid: 'bob',
      channelId: 'g1',
      channelType: ChannelType.Group,
      messageIds: [all[0]!.message_id],
      messageSeqs: [3, 99],
      clientMsgNos: ['c-6'],
    });
    expect(seqs({ messages: r })).toEqual([1, 3, 6]);
  });

  it('refuses more than 128 selectors', async () => {
    const err = await refusal(
      sync.exact({
        loginUid: 'bob',
        channelId: 'g1',
        channelType: ChannelType.Group,
        messageIds: [],
        messageSeqs: Array.from({ length: 129 }, (_, i) => i + 1),
        clientMsgNos: [],
      }),
    );
    expect(err.message).toBe('at most 128 selectors per request');
  });
});
