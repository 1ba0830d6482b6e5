import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, rawMessageIds } from './helpers.ts';
import { startTestApp, type TestApp } from './app.ts';
import { STORE_DRIVERS } from '../../../test-support/stores.ts';

describe.each(STORE_DRIVERS)('store: %s', (driver) => {
  /** Through `app.inject`: what these operations answer does not depend on a socket. */
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({}, driver);
  });
  afterAll(() => t?.close());

  const legacy = (msg: string) => ({ msg, status: 400, code: expect.any(String) });
  const send = (from: string, channel: string, type: number, text = 'x') =>
    post(t.api, '/message/send', {
      from_uid: from,
      channel_id: channel,
      channel_type: type,
      payload: Buffer.from(text).toString('base64'),
    });
  type Conv = {
    channel_id: string;
    channel_type: number;
    unread: number;
    read_seq: number;
    last_message: { message_seq: number; message_idstr: string } | null;
  };
  const list = async (uid: string, body: object = {}) => (await post(t.api, '/conversation/list', { uid, ...body })).json;
  const find = async (uid: string, channel: string): Promise<Conv | undefined> =>
    (await list(uid)).conversations.find((c: Conv) => c.channel_id === channel);

  describe('/conversation/list', () => {
    it('derives unread, last message and peer ids; own sends count as read', async () => {
      await send('alice', 'bob', 1, 'one');
      const second = await send('alice', 'bob', 1, 'two');
      const page = await post(t.api, '/conversation/list', { uid: 'bob' });
      expect(page.json).toMatchObject({ done: true, deletes: [], unresolved: [], reset_required: false });
      const conv = page.json.conversations.find((c: Conv) => c.channel_id === 'alice');
      expect(conv).toMatchObject({
        channel_type: 1,
        unread: 2,
        read_seq: 0,
        last_message: { message_seq: 2, message_idstr: rawMessageIds(second.text)[0] },
      });
      expect(await find('alice', 'bob')).toMatchObject({ unread: 0 });
    });

    it('pages by cursor until done, with every conversation once', async () => {
      for (let i = 0; i < 7; i++) await send(`p${i}`, 'pager', 1);
      const seen: string[] = [];
      let cursor = '';
      for (let guard = 0; guard < 10; guard++) {
        const page = await list('pager', { cursor, limit: 3 });
        seen.push(...page.conversations.map((c: Conv) => c.channel_id));
        if (page.done) break;
        cursor = page.next_cursor;
      }
      expect(seen.sort()).toEqual(['p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6']);
    });

    it('reports removed memberships and disbanded groups as deletes', async () => {
      await post(t.api, '/channel', { channel_id: 'g1', channel_type: 2, subscribers: ['carl', 'dora'] });
      await send('dora', 'g1', 2);
      await post(t.api, '/channel/subscriber_remove', { channel_id: 'g1', channel_type: 2, subscribers: ['carl'] });
      expect((await list('carl')).deletes).toEqual([{ channel_id: 'g1', channel_type: 2 }]);
      await post(t.api, '/channel/delete', { channel_id: 'g1', channel_type: 2 });
      expect((await list('dora')).deletes).toEqual([{ channel_id: 'g1', channel_type: 2 }]);
    });

    it('validates uid, cursor and limit', async () => {
      expect((await post(t.api, '/conversation/list', { uid: '' })).json).toEqual(legacy('uid不能为空！'));
      expect((await post(t.api, '/conversation/list', { uid: 'bob', cursor: '!!' })).json).toEqual(legacy('cursor格式错误！'));
      expect((await post(t.api, '/conversation/list', { uid: 'bob', limit: 201 })).status).toBe(400);
      const big = await post(t.api, '/conversation/list', { uid: 'bob', cursor: 'x'.repeat(70_000) });
      expect([big.status, big.json.code]).toEqual([413, 'payload_too_large']);
    });
  });

  describe('conversation mutations', () => {
    it('clearUnread, setUnread (never raises unread), delete (until a newer message) and activate', async () => {
      for (let i = 0; i < 4; i++) await send('eve', 'finn', 1);
      const body = { uid: 'finn', channel_id: 'eve', channel_type: 1 };
      expect((await post(t.api, '/conversations/setUnread', { ...body, unread: 1 })).json).toEqual({ status: 200 });
      expect(await find('finn', 'eve')).toMatchObject({ unread: 1, read_seq: 3 });
      await post(t.api, '/conversations/setUnread', { ...body, unread: 3 });
      expect(await find('finn', 'eve')).toMatchObject({ unread: 1 });
      expect((await post(t.api, '/conversations/clearUnread', body)).json).toEqual({ status: 200 });
      expect(await find('finn', 'eve')).toMatchObject({ unread: 0, read_seq: 4 });
      expect((await post(t.api, '/conversations/delete', body)).json).toEqual({ status: 200 });
      expect(await find('finn', 'eve')).toBeUndefined();
      expect((await post(t.api, '/conversations/activate', body)).json).toEqual({ status: 200 });
      expect(await find('finn', 'eve')).toMatchObject({ last_message: null });
      await send('eve', 'finn', 1);
      expect(await find('finn', 'eve')).toMatchObject({ unread: 1, last_message: { message_seq: 5 } });
    });
    it('reject bad bodies and a missing membership', async () => {
      expect((await post(t.api, '/conversations/clearUnread', { channel_id: 'eve', channel_type: 1 })).json).toEqual(
        legacy('uid cannot be empty'),
      );
      expect((await post(t.api, '/conversations/delete', { uid: 'finn' })).json).toEqual(
        legacy('channel_id or channel_type cannot be empty'),
      );
      expect((await post(t.api, '/conversations/setUnread', { uid: 'finn', channel_id: 'eve', channel_type: 1, unread: -1 })).json).toEqual(
        legacy('unread cannot be negative'),
      );
      expect((await post(t.api, '/conversations/activate', { uid: 'nobody', channel_id: 'g9', channel_type: 2 })).status).toBe(400);
    });
  });

  describe('/conversation/retry and the deprecated /conversation/sync', () => {
    it('retry point-reads conversations and reports unknown ones as deletes', async () => {
      const r = await post(t.api, '/conversation/retry', {
        uid: 'bob',
        channels: [
          { channel_id: 'alice', channel_type: 1 },
          { channel_id: 'zz', channel_type: 2 },
        ],
      });
      expect(r.json).toMatchObject({ done: true, deletes: [{ channel_id: 'zz', channel_type: 2 }] });
      expect(r.json.conversations.map((c: Conv) => c.channel_id)).toEqual(['alice']);
      expect((await post(t.api, '/conversation/retry', { uid: 'bob', channels: [] })).json).toEqual(legacy('uid或channels不能为空！'));
    });
    it('sync lists conversations with unread, last seq and recents', async () => {
      const r = await post(t.api, '/conversation/sync', { uid: 'bob', msg_count: 1 });
      const item = r.json.find((c: { channel_id: string }) => c.channel_id === 'alice');
      expect(item).toMatchObject({ channel_type: 1, unread: 2, last_msg_seq: 2, readed_to_msg_seq: 0, offset_msg_seq: 0 });
      expect(item.recents).toHaveLength(1);
      expect(item.recents[0].message_seq).toBe(2);
      expect((await post(t.api, '/conversation/sync', { uid: '' })).json).toEqual(legacy('invalid request'));
    });
  });
});
