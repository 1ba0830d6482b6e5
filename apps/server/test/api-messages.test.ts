import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRpc, get, post, rawMessageIds, startTestServer, storeToken, type TestServer } from './helpers.ts';
import { STORE_DRIVERS, storeEnv } from '../../../test-support/stores.ts';

describe.each(STORE_DRIVERS)('store: %s', (driver) => {
  let t: TestServer;
  const ids: string[] = [];
  const store = storeEnv(driver);
  afterAll(() => store.drop());
  beforeAll(async () => {
    t = await startTestServer(store.env);
    await post(t.api, '/channel', { channel_id: 'g', channel_type: 2, subscribers: ['a', 'b'] });
    for (let i = 1; i <= 5; i++) {
      const r = await post(t.api, '/message/send', {
        from_uid: 'a',
        channel_id: 'g',
        channel_type: 2,
        payload: Buffer.from(`m${i}`).toString('base64'),
        client_msg_no: `n${i}`,
      });
      ids.push(rawMessageIds(r.text)[0]!);
    }
  });
  afterAll(() => t.close());

  const legacy = (msg: string) => ({ msg, status: 400, code: expect.any(String) });
  const seqsOf = (r: { json: { messages: Array<{ message_seq: number }> } }) => r.json.messages.map((m) => m.message_seq);

  describe('POST /channel/messagesync pull modes', () => {
    it('down from the newest, down from a seq, up from a seq, with more', async () => {
      const page = (body: object) => post(t.api, '/channel/messagesync', { login_uid: 'b', channel_id: 'g', channel_type: 2, ...body });
      const newest = await page({ pull_mode: 0, limit: 2 });
      expect([seqsOf(newest), newest.json.more]).toEqual([[4, 5], 1]);
      const older = await page({ pull_mode: 0, start_message_seq: 3, limit: 2 });
      expect([seqsOf(older), older.json.more]).toEqual([[2, 3], 1]);
      const up = await page({ pull_mode: 1, start_message_seq: 4, limit: 10 });
      expect([seqsOf(up), up.json.more]).toEqual([[4, 5], 0]);
      const bounded = await page({ pull_mode: 1, start_message_seq: 1, end_message_seq: 3 });
      expect(seqsOf(bounded)).toEqual([1, 2]);
    });
  });

  describe('POST /channel/messagesyncbatch', () => {
    it('answers per item in request order', async () => {
      await post(t.api, '/message/send', { from_uid: 'a', channel_id: 'b', channel_type: 1, payload: 'aGk=' });
      const r = await post(t.api, '/channel/messagesyncbatch', {
        login_uid: 'b',
        items: [
          { channel_id: 'g', channel_type: 2, pull_mode: 1, start_message_seq: 5 },
          { channel_id: 'a', channel_type: 1, pull_mode: 1 },
        ],
      });
      expect(r.json.items.map((i: { channel_id: string; messages: unknown[] }) => [i.channel_id, i.messages.length])).toEqual([
        ['g', 1],
        ['a', 1],
      ]);
    });
    it('refuses the whole request when one item is not readable, and an empty batch', async () => {
      const r = await post(t.api, '/channel/messagesyncbatch', {
        login_uid: 'b',
        items: [
          { channel_id: 'g', channel_type: 2 },
          { channel_id: 'other', channel_type: 2 },
        ],
      });
      expect(r.json).toEqual(legacy('internal/message: valid channel membership required'));
      expect((await post(t.api, '/channel/messagesyncbatch', { login_uid: 'b', items: [] })).json).toEqual(
        legacy('internal/message: batch message sync items required'),
      );
    });
  });

  describe('tail probes', () => {
    it('GET /channel/max_message_seq and /channel/last_message', async () => {
      expect((await get(t.api, '/channel/max_message_seq?channel_id=g&channel_type=2&login_uid=b')).json).toEqual({ message_seq: 5 });
      const last = await get(t.api, '/channel/last_message?channel_id=g&channel_type=2&login_uid=b');
      expect(last.json).toMatchObject({ message_seq: 5, client_msg_no: 'n5', from_uid: 'a', message_idstr: ids[4] });
      expect(rawMessageIds(last.text)).toEqual([ids[4]]);
      expect((await get(t.api, '/channel/max_message_seq?channel_id=g&channel_type=2')).json).toEqual(legacy('login_uid不能为空！'));
      expect((await get(t.api, '/channel/last_message?channel_id=g&channel_type=2&login_uid=zed')).status).toBe(400);
    });
  });

  describe('POST /messages', () => {
    it('finds messages by exact 64-bit id, seq and client_msg_no', async () => {
      const body = `{"login_uid":"b","channel_id":"g","channel_type":2,"message_ids":[${ids[0]}],"message_seqs":[3],"client_msg_nos":["n5","missing"]}`;
      const r = await post(t.api, '/messages', body, true);
      expect(r.status).toBe(200);
      expect(seqsOf(r)).toEqual([1, 3, 5]);
      expect(rawMessageIds(r.text)).toEqual([ids[0], ids[2], ids[4]]);
    });
    it('selects nothing by an id past int64 (no message can have it) instead of failing', async () => {
      const body = `{"login_uid":"b","channel_id":"g","channel_type":2,"message_ids":["99999999999999999999",${ids[0]}]}`;
      const r = await post(t.api, '/messages', body, true);
      expect(r.status).toBe(200);
      expect(rawMessageIds(r.text)).toEqual([ids[0]]);
    });
    it('refuses more than 128 selectors explicitly', async () => {
      const r = await post(t.api, '/messages', {
        login_uid: 'b',
        channel_id: 'g',
        channel_type: 2,
        message_seqs: Array.from({ length: 129 }, (_, i) => i + 1),
      });
      expect(r.json).toEqual(legacy('at most 128 selectors per request'));
    });
    it('refuses a caller who may not read the channel', async () => {
      expect((await post(t.api, '/messages', { login_uid: 'zed', channel_id: 'g', channel_type: 2, message_seqs: [1] })).status).toBe(400);
    });
  });

  describe('POST /message/sendbatch', () => {
    it('sends one person message to each subscriber and reports the failures', async () => {
      await post(t.api, '/channel/blacklist_add', { channel_id: 'u3', channel_type: 1, uids: ['boss'] });
      const r = await post(t.api, '/message/sendbatch', { from_uid: 'boss', subscribers: ['u1', 'u2', 'u3'], payload: 'aGk=' });
      expect(r.json).toEqual({ fail_uids: ['u3'], reason: [4] });
      const pull = await post(t.api, '/channel/messagesync', { login_uid: 'u2', channel_id: 'boss', channel_type: 1, pull_mode: 1 });
      expect(pull.json.messages).toHaveLength(1);
      expect((await post(t.api, '/message/sendbatch', { from_uid: 'boss', subscribers: [], payload: 'aGk=' })).status).toBe(400);
    });
  });

  describe('request-scoped sends', () => {
    it('deliver a command to exactly the listed uids and need sync_once', async () => {
      for (const uid of ['r1', 'r2', 'r3']) await storeToken(t.api, uid, `tok-${uid}`);
      const [r1, r2, r3] = await Promise.all(['r1', 'r2', 'r3'].map((u) => connectRpc(t.ws, u, `tok-${u}`)));
      const ok = await post(t.api, '/message/send', {
        from_uid: 'svc',
        subscribers: ['r1', ' r2 ', 'r1'],
        payload: 'eyJ0eXBlIjo5OX0=',
        header: { sync_once: 1 },
      });
      expect(ok.json).toMatchObject({ reason: 1, message_seq: 1 });
      for (const c of [r1!, r2!])
        expect((await c.nextNotification('recv')).params).toMatchObject({
          channelType: 8,
          header: { syncOnce: true },
          payload: { type: 99 },
        });
      // A later message to r3 alone: fan-out to one session keeps order, so once it arrives, anything
      // the scoped send had delivered to r3 would have arrived before it.
      const marker = await post(t.api, '/message/send', {
        from_uid: 'svc',
        subscribers: ['r3'],
        payload: 'bWFyaw==',
        header: { sync_once: 1 },
      });
      expect(marker.json.reason).toBe(1);
      const first = await r3!.nextNotification('recv');
      expect(first.params.messageId).toBe(rawMessageIds(marker.text)[0]);
      expect(r3!.pending('recv')).toHaveLength(0);
      const needs = await post(t.api, '/message/send', { from_uid: 'svc', subscribers: ['r1'], payload: 'aGk=' });
      expect(needs.json).toEqual({ error: 'request subscribers require sync_once', code: expect.any(String) });
      const both = await post(t.api, '/message/send', {
        from_uid: 'svc',
        subscribers: ['r1'],
        channel_id: 'g',
        channel_type: 2,
        payload: 'aGk=',
        sync_once: 1,
      });
      expect(both.json.error).toBe('request subscribers cannot include channel_id');
      for (const c of [r1!, r2!, r3!]) c.close();
    });
  });
});
