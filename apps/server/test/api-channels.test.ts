import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { get, post } from './helpers.ts';
import { startTestApp, type TestApp } from './app.ts';

/** Through `app.inject`: what these operations answer does not depend on a socket. */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const legacy = (msg: string) => ({ msg, status: 400, code: expect.any(String) });
const send = async (from: string, channel: string, type = 2) =>
  (await post(t.api, '/message/send', { from_uid: from, channel_id: channel, channel_type: type, payload: 'aGk=' })).json.reason as number;

describe('channel metadata', () => {
  it('/channel/info updates flags (ban blocks group sends with 19)', async () => {
    await post(t.api, '/channel', { channel_id: 'c1', channel_type: 2, subscribers: ['a', 'b'] });
    expect((await post(t.api, '/channel/info', { channel_id: 'c1', channel_type: 2, ban: 1 })).json).toEqual({ status: 200 });
    expect(await send('a', 'c1')).toBe(19);
    await post(t.api, '/channel/info', { channel_id: 'c1', channel_type: 2, ban: 0 });
    expect(await send('a', 'c1')).toBe(1);
  });

  it('/channel/delete disbands for good: sends get 24, pulls 400', async () => {
    await post(t.api, '/channel', { channel_id: 'c2', channel_type: 2, subscribers: ['a'] });
    expect((await post(t.api, '/channel/delete', { channel_id: 'c2', channel_type: 2 })).json).toEqual({ status: 200 });
    expect(await send('a', 'c2')).toBe(24);
    await post(t.api, '/channel', { channel_id: 'c2', channel_type: 2, disband: 0 });
    expect(await send('a', 'c2')).toBe(24);
    const pull = await post(t.api, '/channel/messagesync', { login_uid: 'a', channel_id: 'c2', channel_type: 2 });
    expect(pull.json).toEqual(legacy('internal/message: channel disbanded'));
    expect((await post(t.api, '/channel/delete', { channel_id: 'nope', channel_type: 2 })).json).toEqual(legacy('channel not found'));
    expect((await post(t.api, '/channel/delete', { channel_id: 'a', channel_type: 1 })).json).toEqual(legacy('个人频道不支持添加订阅者！'));
  });
});

describe('subscribers', () => {
  it('/channel/subscriber_remove_all empties the group', async () => {
    await post(t.api, '/channel', { channel_id: 'c3', channel_type: 2, subscribers: ['a', 'b'] });
    expect((await post(t.api, '/channel/subscriber_remove_all', { channel_id: 'c3', channel_type: 2 })).json).toEqual({ status: 200 });
    expect(await send('a', 'c3')).toBe(3);
    expect((await post(t.api, '/channel/subscriber_remove_all', { channel_id: 'a', channel_type: 1 })).json).toEqual(
      legacy('个人频道不支持此操作！'),
    );
  });
  it('/channel/subscriber_add and _remove change who may send and pull', async () => {
    await post(t.api, '/channel', { channel_id: 'c4', channel_type: 2 });
    expect((await post(t.api, '/channel/subscriber_add', { channel_id: 'c4', subscribers: ['x'] })).json).toEqual({ status: 200 });
    expect(await send('x', 'c4')).toBe(1);
    expect((await post(t.api, '/channel/subscriber_remove', { channel_id: 'c4', channel_type: 2, subscribers: ['x'] })).json).toEqual({
      status: 200,
    });
    expect(await send('x', 'c4')).toBe(3);
    const pull = await post(t.api, '/channel/messagesync', { login_uid: 'x', channel_id: 'c4', channel_type: 2 });
    expect(pull.status).toBe(400);
  });
  it('/tmpchannel/subscriber_set replaces the temp list', async () => {
    expect((await post(t.api, '/tmpchannel/subscriber_set', { channel_id: 't1', uids: ['a', 'b'] })).json).toEqual({ status: 200 });
    expect(await t.store.channels.listMembers('t1', 8, 'temp')).toEqual(['a', 'b']);
    await post(t.api, '/tmpchannel/subscriber_set', { channel_id: 't1', uids: ['c'] });
    expect(await t.store.channels.listMembers('t1', 8, 'temp')).toEqual(['c']);
    expect((await post(t.api, '/tmpchannel/subscriber_set', { channel_id: 't1', uids: [] })).json).toEqual(legacy('uids不能为空！'));
  });
});

describe('allow and deny lists', () => {
  it('denylist add/set/remove/remove_all decide reason 4', async () => {
    await post(t.api, '/channel', { channel_id: 'c5', channel_type: 2, subscribers: ['a', 'b'] });
    expect((await post(t.api, '/channel/blacklist_add', { channel_id: 'c5', channel_type: 2, uids: ['a'] })).json).toEqual({ status: 200 });
    expect(await send('a', 'c5')).toBe(4);
    expect((await post(t.api, '/channel/blacklist_remove', { channel_id: 'c5', channel_type: 2, uids: ['a'] })).json).toEqual({
      status: 200,
    });
    expect(await send('a', 'c5')).toBe(1);
    expect((await post(t.api, '/channel/blacklist_set', { channel_id: 'c5', channel_type: 2, uids: ['b'] })).json).toEqual({ status: 200 });
    expect([await send('a', 'c5'), await send('b', 'c5')]).toEqual([1, 4]);
    expect((await post(t.api, '/channel/blacklist_remove_all', { channel_id: 'c5', channel_type: 2 })).json).toEqual({ status: 200 });
    expect(await send('b', 'c5')).toBe(1);
    expect((await post(t.api, '/channel/blacklist_set', { channel_id: '', channel_type: 2 })).json).toEqual(legacy('频道ID不能为空！'));
    expect((await post(t.api, '/channel/blacklist_remove_all', { channel_id: 'c5', channel_type: 0 })).json).toEqual(
      legacy('频道类型不能为0！'),
    );
  });
  it('a person denylist blocks that sender (reason 4)', async () => {
    await post(t.api, '/channel/blacklist_add', { channel_id: 'victim', channel_type: 1, uids: ['spammer'] });
    expect(await send('spammer', 'victim', 1)).toBe(4);
    expect(await send('friend', 'victim', 1)).toBe(1);
  });
  it('allowlist add/set/remove/remove_all and GET /channel/whitelist decide reason 13', async () => {
    await post(t.api, '/channel', { channel_id: 'c6', channel_type: 2, subscribers: ['a', 'b'] });
    expect((await post(t.api, '/channel/whitelist_add', { channel_id: 'c6', channel_type: 2, uids: ['a'] })).json).toEqual({ status: 200 });
    expect((await get(t.api, '/channel/whitelist?channel_id=c6&channel_type=2')).json).toEqual([{ id: 0, uid: 'a' }]);
    expect([await send('a', 'c6'), await send('b', 'c6')]).toEqual([1, 13]);
    await post(t.api, '/channel/whitelist_set', { channel_id: 'c6', channel_type: 2, uids: ['b'] });
    expect((await get(t.api, '/channel/whitelist?channel_id=c6&channel_type=2')).json).toEqual([{ id: 0, uid: 'b' }]);
    expect((await post(t.api, '/channel/whitelist_remove', { channel_id: 'c6', channel_type: 2, uids: ['b'] })).json).toEqual({
      status: 200,
    });
    expect([await send('a', 'c6'), await send('b', 'c6')]).toEqual([1, 1]);
    await post(t.api, '/channel/whitelist_add', { channel_id: 'c6', channel_type: 2, uids: ['a'] });
    expect((await post(t.api, '/channel/whitelist_remove_all', { channel_id: 'c6', channel_type: 2 })).json).toEqual({ status: 200 });
    expect((await get(t.api, '/channel/whitelist?channel_id=c6&channel_type=2')).json).toEqual([]);
    expect((await post(t.api, '/channel/whitelist_add', { channel_id: 'c#6', channel_type: 2, uids: ['a'] })).json).toEqual(
      legacy('频道ID不能包含特殊字符！'),
    );
    expect((await get(t.api, '/channel/whitelist')).json).toEqual(legacy('channel_id不能为空！'));
  });
});
