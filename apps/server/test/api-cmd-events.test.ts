import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRpc, post, startTestServer, storeToken, type TestServer } from './helpers.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  await post(t.api, '/channel', { channel_id: 'team', channel_type: 2, subscribers: ['boss', 'w1', 'w2'] });
});
afterAll(() => t.close());

const legacy = (msg: string) => ({ msg, status: 400, code: expect.any(String) });
const cmd = (n: number) =>
  post(t.api, '/message/send', {
    from_uid: 'boss',
    channel_id: 'team',
    channel_type: 2,
    payload: Buffer.from(JSON.stringify({ type: 99, cmd: `c${n}` })).toString('base64'),
    header: { sync_once: 1 },
  });

describe('command messages', () => {
  it('are delivered online with syncOnce, kept out of ordinary pulls, and numbered in their own log', async () => {
    await storeToken(t.api, 'w2', 'tok-w2');
    const w2 = await connectRpc(t.ws, 'w2', 'tok-w2');
    const ordinary = await post(t.api, '/message/send', { from_uid: 'boss', channel_id: 'team', channel_type: 2, payload: 'aGk=' });
    const first = await cmd(0);
    expect([ordinary.json.message_seq, first.json.message_seq]).toEqual([1, 1]);
    await w2.nextNotification('recv');
    expect((await w2.nextNotification('recv')).params).toMatchObject({
      channelId: 'team',
      header: { syncOnce: true },
      payload: { type: 99, cmd: 'c0' },
    });
    const pull = await post(t.api, '/channel/messagesync', { login_uid: 'w1', channel_id: 'team', channel_type: 2, pull_mode: 1 });
    expect(pull.json.messages.map((m: { message_seq: number }) => m.message_seq)).toEqual([1]);
    w2.close();
  });

  it('bind recovers only later commands; sync then syncack advances; unbind stops it', async () => {
    expect((await post(t.api, '/message/cmd/bind', { uid: 'w1', channel_id: 'team', channel_type: 2 })).json).toEqual({ status: 200 });
    await cmd(1);
    await cmd(2);
    const synced = await post(t.api, '/message/sync', { uid: 'w1', limit: 10 });
    expect(
      synced.json.map((m: { payload: string; channel_id: string; header: { sync_once: number } }) => [
        m.channel_id,
        m.header.sync_once,
        JSON.parse(Buffer.from(m.payload, 'base64').toString()).cmd,
      ]),
    ).toEqual([
      ['team', 1, 'c1'],
      ['team', 1, 'c2'],
    ]);
    expect((await post(t.api, '/message/sync', { uid: 'w1' })).json).toHaveLength(2);
    expect((await post(t.api, '/message/syncack', { uid: 'w1', last_message_seq: 3 })).json).toEqual({ status: 200 });
    expect((await post(t.api, '/message/sync', { uid: 'w1' })).json).toEqual([]);
    await cmd(3);
    expect((await post(t.api, '/message/sync', { uid: 'w1' })).json).toHaveLength(1);
    expect((await post(t.api, '/message/cmd/unbind', { uid: 'w1', channel_id: 'team', channel_type: 2 })).json).toEqual({ status: 200 });
    expect((await post(t.api, '/message/sync', { uid: 'w1' })).json).toEqual([]);
  });

  it('bind accepts the batch form and refuses over 1000 items or 256 KiB', async () => {
    expect((await post(t.api, '/message/cmd/bind', { uids: ['b1', 'b2'], channel_id: 'team', channel_type: 2 })).json).toEqual({
      status: 200,
    });
    await cmd(4);
    expect((await post(t.api, '/message/sync', { uid: 'b2' })).json).toHaveLength(1);
    const many = await post(t.api, '/message/cmd/bind', {
      subscribers: Array.from({ length: 1001 }, (_, i) => `u${i}`),
      channel_id: 'team',
      channel_type: 2,
    });
    expect([many.status, many.json.code]).toEqual([400, 'too_many_items']);
    const huge = await post(t.api, '/message/cmd/bind', {
      uids: ['x'.repeat(200)],
      channel_id: 'team',
      channel_type: 2,
      pad: 'y'.repeat(300_000),
    });
    expect(huge.status).toBe(413);
    expect((await post(t.api, '/message/cmd/bind', { channel_id: 'team', channel_type: 2 })).json).toEqual(
      legacy('uid、channel_id和channel_type不能为空！'),
    );
  });

  it('sync and syncack validate their bodies', async () => {
    expect((await post(t.api, '/message/sync', { uid: '' })).json).toEqual(legacy('uid不能为空！'));
    expect((await post(t.api, '/message/sync', { uid: 'w1', limit: -1 })).json).toEqual(legacy('limit不能为负数！'));
    expect((await post(t.api, '/message/syncack', { uid: 'w1' })).json).toEqual(legacy('last_message_seq不能为空！'));
  });
});

describe('stream events', () => {
  it('appends events idempotently by event_id, numbers them and reads them back', async () => {
    const base = { channel_id: 'team', channel_type: 2, from_uid: 'boss', client_msg_no: 'stream-1', message_id: '2124331629039063041' };
    const open = await post(t.api, '/message/event', {
      ...base,
      event_id: 'e1',
      event_type: 'stream.delta',
      payload: { kind: 'text', delta: 'Hel' },
    });
    expect(open.json).toEqual({
      status: 200,
      data: expect.objectContaining({ msg_event_seq: 1, stream_status: 'open', event_key: 'main' }),
    });
    const again = await post(t.api, '/message/event', {
      ...base,
      event_id: 'e1',
      event_type: 'stream.delta',
      payload: { kind: 'text', delta: 'Hel' },
    });
    expect(again.json.data.msg_event_seq).toBe(1);
    const close = await post(t.api, '/message/event', { ...base, event_id: 'e2', event_type: 'STREAM.CLOSE' });
    expect(close.json.data).toMatchObject({ msg_event_seq: 2, stream_status: 'closed' });
    const finish = await post(t.api, '/message/event', { ...base, event_id: 'e3', event_type: 'stream.finish' });
    expect(finish.json.data.event_key).toBe('__finish__');
    const read = await post(t.api, '/message/eventsync', {
      channel_id: 'team',
      channel_type: 2,
      client_msg_no: 'stream-1',
      from_msg_event_seq: 1,
    });
    expect(read.json.events.map((e: { msg_event_seq: number; event_type: string }) => [e.msg_event_seq, e.event_type])).toEqual([
      [2, 'stream.close'],
      [3, 'stream.finish'],
    ]);
    expect(read.text).toContain('"message_id":2124331629039063041');
  });
  it('rejects headers, unknown types and missing anchors', async () => {
    const base = { channel_id: 'team', channel_type: 2, client_msg_no: 's', event_id: 'e', event_type: 'stream.delta' };
    expect((await post(t.api, '/message/event', { ...base, headers: {} })).json).toEqual(legacy('message event headers are not supported'));
    expect((await post(t.api, '/message/event', { ...base, event_type: 'poke' })).json).toEqual(legacy('unknown event_type "poke"'));
    expect((await post(t.api, '/message/event', { ...base, client_msg_no: '' })).json).toEqual(legacy('client_msg_no不能为空！'));
    // An id past int64, appended in the same turn as a good event: refused alone, the other stored.
    const [tooLarge, good] = await Promise.all([
      post(t.api, '/message/event', { ...base, client_msg_no: 'big', message_id: '9223372036854775808' }),
      post(t.api, '/message/event', { ...base, client_msg_no: 'big', event_id: 'ok', message_id: '9223372036854775807' }),
    ]);
    expect(tooLarge.json).toEqual(legacy('message_id exceeds the largest 64-bit message id'));
    expect(good.json).toMatchObject({ status: 200, data: { msg_event_seq: 1 } });
    expect((await post(t.api, '/message/eventsync', { channel_id: 'team', channel_type: 2, client_msg_no: '' })).json).toEqual(
      legacy('client_msg_no不能为空！'),
    );
  });
});

describe('stream messages in pulls', () => {
  it('attach event meta, the main lane text and the end marker when include_event_meta is set', async () => {
    const sent = await post(t.api, '/message/send', {
      from_uid: 'boss',
      channel_id: 'team',
      channel_type: 2,
      setting: 2,
      client_msg_no: 'ai-1',
      payload: 'e30=',
    });
    expect(sent.json.reason).toBe(1);
    const ev = async (event_id: string, event_type: string, extra: object = {}) => {
      const r = await post(t.api, '/message/event', {
        channel_id: 'team',
        channel_type: 2,
        from_uid: 'boss',
        client_msg_no: 'ai-1',
        event_id,
        event_type,
        ...extra,
      });
      // Each append must be stored: one refused (a 503 while the writer thread committed) showed up only as a shorter text.
      expect([event_id, r.status, r.json.status]).toEqual([event_id, 200, 200]);
    };
    await ev('d1', 'stream.delta', { payload: { kind: 'text', delta: 'Hel' } });
    await ev('d2', 'stream.delta', { payload: { kind: 'text', delta: 'lo' } });
    await ev('t1', 'stream.delta', { event_key: 'thinking', payload: 'hmm' });
    await ev('t2', 'stream.error', { event_key: 'thinking', payload: { error: 'tool timed out' } });
    await ev('c1', 'stream.close');
    const pull = (extra: object) =>
      post(t.api, '/channel/messagesync', {
        login_uid: 'w1',
        channel_id: 'team',
        channel_type: 2,
        pull_mode: 1,
        start_message_seq: sent.json.message_seq,
        ...extra,
      });

    const plain = (await pull({})).json.messages[0];
    expect(plain.event_meta).toBeUndefined();
    expect(plain.stream_data).toBeUndefined();

    const full = (await pull({ include_event_meta: 1, event_summary_mode: 'full' })).json.messages[0];
    expect(Buffer.from(full.stream_data, 'base64').toString()).toBe('Hello');
    expect(full).toMatchObject({ end: 1, event_sync_hint: { client_msg_no: 'ai-1', from_msg_event_seq: 0 } });
    expect(full.event_meta).toEqual({
      has_events: true,
      completed: false,
      event_version: 5,
      last_msg_event_seq: 5,
      event_count: 5,
      open_event_count: 0,
      events: [
        { event_key: 'main', status: 'closed', last_msg_event_seq: 5, end_reason: 0, snapshot: { kind: 'text', text: 'Hello' } },
        {
          event_key: 'thinking',
          status: 'error',
          last_msg_event_seq: 4,
          end_reason: 1,
          error: 'tool timed out',
          snapshot: { kind: 'text', text: 'hmm' },
        },
      ],
    });
    const compact = (await pull({ include_event_meta: 1 })).json.messages[0];
    expect(compact.event_meta.events.every((e: object) => !('snapshot' in e))).toBe(true);
  });
});
