import { ChannelType, normalizePersonChannel } from '@parley/shared';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { messagingKit, type MessagingKit } from '../../test/messaging-kit.ts';
import { DomainError } from '../errors.ts';
import { ConversationService, decodeCursor, encodeCursor } from './conversation.service.ts';

let k: MessagingKit;
let conv: ConversationService;
beforeEach(async () => {
  k = await messagingKit();
  conv = new ConversationService(k.store, k.queue);
  await k.channels.upsert('g1', ChannelType.Group, {});
  await k.channels.addSubscribers('g1', ChannelType.Group, ['alice', 'bob']);
});
afterEach(() => k.close());

const item = async (uid: string, channelId: string) => (await conv.list(uid, '', 0)).conversations.find((c) => c.channel_id === channelId);

describe('ConversationService.list', () => {
  it("derives unread from the tail and the read position; the sender's own messages count as read", async () => {
    for (const t of ['a', 'b', 'c']) await k.sendText('alice', 'g1', ChannelType.Group, t);
    expect(await item('bob', 'g1')).toMatchObject({ unread: 3, read_seq: 0, last_message: { message_seq: 3 } });
    expect((await item('alice', 'g1'))?.unread).toBe(0);
  });

  it('shows the peer as the channel id of a person conversation', async () => {
    await k.sendText('alice', 'bob', ChannelType.Person, 'hi');
    expect((await conv.list('bob', '', 0)).conversations.map((c) => [c.channel_id, c.channel_type])).toContainEqual(['alice', 1]);
  });

  it('lists nothing for a membership with no message yet, until it is activated', async () => {
    expect(await item('bob', 'g1')).toBeUndefined();
    await conv.activate('bob', 'g1', ChannelType.Group);
    expect(await item('bob', 'g1')).toMatchObject({ unread: 0, last_message: null });
  });

  it('pages in directory order with an opaque cursor until done', async () => {
    for (const g of ['g2', 'g3', 'g4']) {
      await k.channels.upsert(g, ChannelType.Group, {});
      await k.channels.addSubscribers(g, ChannelType.Group, ['bob']);
      await k.sendText('bob', g, ChannelType.Group, 'x');
    }
    // four memberships (g1 has no message yet, so it is not listed) in pages of two: three calls
    const seen: string[] = [];
    let cursor = '';
    let calls = 0;
    for (let done = false; !done; calls++) {
      const page = await conv.list('bob', cursor, 2);
      seen.push(...page.conversations.map((c) => c.channel_id));
      done = page.done;
      cursor = page.next_cursor ?? '';
    }
    expect(calls).toBe(3);
    expect(seen.sort()).toEqual(['g2', 'g3', 'g4']);
  });

  it('refuses a cursor it did not make', async () => {
    const err = await conv.list('bob', 'not-a-cursor!', 0).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect(err).toMatchObject({ code: 'conversation_rejected', status: 400, message: 'cursor格式错误！' });
  });
});

describe('ConversationService mutations', () => {
  beforeEach(async () => {
    for (const t of ['a', 'b', 'c', 'd']) await k.sendText('alice', 'g1', ChannelType.Group, t);
  });

  it('clearUnread reads up to the tail; setUnread only ever lowers unread', async () => {
    await conv.setUnread('bob', 'g1', ChannelType.Group, 1);
    expect((await item('bob', 'g1'))?.unread).toBe(1);
    await conv.setUnread('bob', 'g1', ChannelType.Group, 3);
    expect((await item('bob', 'g1'))?.unread).toBe(1);
    await conv.clearUnread('bob', 'g1', ChannelType.Group);
    expect(await item('bob', 'g1')).toMatchObject({ unread: 0, read_seq: 4 });
  });

  it('delete hides the conversation until a newer message arrives', async () => {
    await conv.delete('bob', 'g1', ChannelType.Group);
    expect(await item('bob', 'g1')).toBeUndefined();
    await k.sendText('alice', 'g1', ChannelType.Group, 'again');
    expect(await item('bob', 'g1')).toMatchObject({ unread: 1, deleted_to_seq: 4, last_message: { message_seq: 5 } });
  });

  it('refuses a conversation the user is not a member of', async () => {
    await expect(conv.clearUnread('mallory', 'g1', ChannelType.Group)).rejects.toMatchObject({
      code: 'conversation_rejected',
      message: 'conversation membership not found',
    });
  });

  it('all() lists every visible conversation, newest message first (the deprecated sync)', async () => {
    await k.sendText('carol', 'bob', ChannelType.Person, 'later');
    const all = await conv.all('bob', 10);
    expect(all.map((c) => c.channelId)).toEqual([normalizePersonChannel('bob', 'carol'), 'g1']);
  });
});

describe('directory cursors', () => {
  it('round-trip a position and reject anything else', () => {
    const key = { activatedAt: 1_700_000_000_123, channelId: 'g1', channelType: 2 };
    expect(decodeCursor(encodeCursor(key))).toEqual(key);
    expect(decodeCursor('AAAA')).toBeUndefined();
    expect(decodeCursor('x'.repeat(2000))).toBeUndefined();
  });
});
