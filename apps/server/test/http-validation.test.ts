import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JsonRpcClient } from '@parley/protocol/jsonrpc';
import { get, post, startTestServer, storeToken, type TestServer } from './helpers.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ PARLEY_API_MAX_BODY_BYTES: '65536' });
  await storeToken(t.api, 'alice', 'a-tok');
  await post(t.api, '/channel', { channel_id: 'grp', channel_type: 2, subscribers: ['alice', 'bob'] });
});
afterAll(() => t.close());

const legacy = (msg: string) => ({ msg, status: 400, code: expect.any(String) });

async function messagesIn(channel: string, type: number, uid = 'alice'): Promise<number> {
  const r = await post(t.api, '/channel/messagesync', { login_uid: uid, channel_id: channel, channel_type: type, pull_mode: 1 });
  return r.status === 200 ? r.json.messages.length : -1;
}

async function tokenWorks(uid: string, token: string, deviceFlag = 1): Promise<boolean> {
  const c = await JsonRpcClient.open(t.ws);
  const r = await c.request('connect', { uid, token, deviceFlag });
  c.close();
  return (r.result as { reasonCode: number } | undefined)?.reasonCode === 1;
}

describe('POST /user/token rejects bad bodies and stores nothing', () => {
  const cases: Array<[string, unknown, string]> = [
    ['invalid JSON', '{"uid":', 'invalid request'],
    ['an array', '[]', 'invalid request'],
    ['a numeric uid', { uid: 5, token: 't' }, 'invalid request'],
    ['a boolean device_flag', { uid: 'v1', token: 't', device_flag: true }, 'invalid request'],
    ['a negative device_flag', { uid: 'v1', token: 't', device_flag: -1 }, 'invalid request'],
    ['device_flag above 255', { uid: 'v1', token: 't', device_flag: 256 }, 'invalid request'],
    ['a missing token', { uid: 'v1' }, 'invalid request'],
    ['an empty uid', { uid: ' ', token: 't' }, 'uid不能为空！'],
    ['an empty token', { uid: 'v1', token: '' }, 'token不能为空！'],
    ['a uid with @', { uid: 'v1@x', token: 't' }, 'uid不能包含特殊字符！'],
    ['the system uid', { uid: '____system', token: 't' }, '系统账号不允许更新token！'],
    ['a huge uid', { uid: 'v'.repeat(300), token: 't' }, 'invalid request'],
  ];
  for (const [name, body, msg] of cases) {
    it(name, async () => {
      const r = await post(t.api, '/user/token', typeof body === 'string' ? body : body, typeof body === 'string');
      expect(r.status).toBe(400);
      expect(r.json).toEqual(legacy(msg));
      expect(await tokenWorks('v1', 't')).toBe(false);
    });
  }
  it('a body over api.max_body_bytes gets 413', async () => {
    const r = await post(t.api, '/user/token', { uid: 'v1', token: 'x'.repeat(70_000) });
    expect(r.status).toBe(413);
    expect(r.json).toMatchObject({ code: 'payload_too_large' });
  });
});

describe('channel routes reject bad bodies and change nothing', () => {
  const cases: Array<[string, string, unknown, string]> = [
    ['/channel', 'no channel id', { channel_id: '', channel_type: 2 }, '频道ID不能为空！'],
    ['/channel', 'a channel id with #', { channel_id: 'a#b', channel_type: 2 }, '频道ID不能包含特殊字符！'],
    ['/channel', 'channel type 0', { channel_id: 'newg', channel_type: 0 }, '频道类型错误！'],
    ['/channel', 'a boolean flag', { channel_id: 'newg', channel_type: 2, ban: true }, '数据格式有误！'],
    [
      '/channel',
      'subscribers on a person channel',
      { channel_id: 'alice', channel_type: 1, subscribers: ['x'] },
      '不支持个人频道添加订阅者！',
    ],
    ['/channel', 'a blank subscriber', { channel_id: 'newg', channel_type: 2, subscribers: ['x', ' '] }, '订阅者不能为空！'],
    ['/channel/subscriber_add', 'no subscribers', { channel_id: 'grp', channel_type: 2, subscribers: [] }, '订阅者不能为空！'],
    [
      '/channel/subscriber_add',
      'a person channel',
      { channel_id: 'alice', channel_type: 1, subscribers: ['x'] },
      '个人频道不支持添加订阅者！',
    ],
    [
      '/channel/subscriber_add',
      'temp subscribers',
      { channel_id: 'grp', channel_type: 2, subscribers: ['x'], temp_subscriber: 1 },
      '新版本临时订阅者已不支持！',
    ],
    ['/channel/subscriber_add', 'subscribers not an array', { channel_id: 'grp', subscribers: 'x' }, '数据格式有误！'],
    ['/channel/subscriber_remove', 'channel type 0', { channel_id: 'grp', channel_type: 0, subscribers: ['alice'] }, '频道类型错误！'],
    ['/channel/blacklist_add', 'no uids', { channel_id: 'grp', channel_type: 2, uids: [] }, 'uids不能为空！'],
    ['/channel/whitelist_add', 'channel type 0', { channel_id: 'grp', channel_type: 0, uids: ['x'] }, '频道类型不能为0！'],
  ];
  for (const [path, name, body, msg] of cases) {
    it(`${path}: ${name}`, async () => {
      const r = await post(t.api, path, body);
      expect(r.status).toBe(400);
      expect(r.json).toEqual(legacy(msg));
    });
  }
  it('left the group as it was', async () => {
    const send = await post(t.api, '/message/send', { from_uid: 'bob', channel_id: 'grp', channel_type: 2, payload: 'aGk=' });
    expect(send.json.reason).toBe(1);
    const intruder = await post(t.api, '/message/send', { from_uid: 'x', channel_id: 'grp', channel_type: 2, payload: 'aGk=' });
    expect(intruder.json.reason).toBe(3);
    const created = await post(t.api, '/message/send', { from_uid: 'x', channel_id: 'newg', channel_type: 2, payload: 'aGk=' });
    expect(created.json.reason).toBe(5);
  });
});

describe('POST /message/send rejects bad bodies and stores nothing', () => {
  const cases: Array<[string, unknown, number, string]> = [
    ['invalid JSON', '{', 400, 'invalid request'],
    ['no sender', { channel_id: 'grp', channel_type: 2, payload: 'aGk=' }, 400, 'invalid request'],
    ['no payload', { from_uid: 'alice', channel_id: 'grp', channel_type: 2 }, 400, 'invalid request'],
    ['an empty payload', { from_uid: 'alice', channel_id: 'grp', channel_type: 2, payload: '' }, 400, 'invalid request'],
    [
      'a payload that is not Base64',
      { from_uid: 'alice', channel_id: 'grp', channel_type: 2, payload: 'not base64!' },
      400,
      'invalid payload',
    ],
    ['a string channel_type', { from_uid: 'alice', channel_id: 'grp', channel_type: '2', payload: 'aGk=' }, 400, 'invalid request'],
    ['channel_type 300', { from_uid: 'alice', channel_id: 'grp', channel_type: 300, payload: 'aGk=' }, 400, 'invalid request'],
    ['a negative expire', { from_uid: 'alice', channel_id: 'grp', channel_type: 2, payload: 'aGk=', expire: -1 }, 400, 'invalid request'],
    ['no channel', { from_uid: 'alice', channel_type: 2, payload: 'aGk=' }, 400, 'invalid request'],
    [
      'a person id not naming the sender',
      { from_uid: 'alice', channel_id: 'bob@carol', channel_type: 1, payload: 'aGk=' },
      400,
      'invalid channel id',
    ],
  ];
  for (const [name, body, status, error] of cases) {
    it(name, async () => {
      const before = await messagesIn('grp', 2);
      const r = await post(t.api, '/message/send', body, typeof body === 'string');
      expect(r.status).toBe(status);
      expect(r.json).toEqual({ error, code: expect.any(String) });
      expect(await messagesIn('grp', 2)).toBe(before);
    });
  }
  it('refuses client_msg_no reuse with a different payload (409) and keeps the first', async () => {
    const body = { from_uid: 'alice', channel_id: 'grp', channel_type: 2, client_msg_no: 'same', payload: 'b25l' };
    const first = await post(t.api, '/message/send', body);
    expect(first.json.reason).toBe(1);
    const clash = await post(t.api, '/message/send', { ...body, payload: 'dHdv' });
    expect(clash.status).toBe(409);
    const sync = await post(t.api, '/channel/messagesync', { login_uid: 'alice', channel_id: 'grp', channel_type: 2, pull_mode: 1 });
    expect(
      sync.json.messages.filter((m: { client_msg_no: string }) => m.client_msg_no === 'same').map((m: { payload: string }) => m.payload),
    ).toEqual(['b25l']);
  });
  it('answers a plain no_persist send with reason 1 and zero ids, storing nothing', async () => {
    const before = await messagesIn('grp', 2);
    const r = await post(t.api, '/message/send', {
      from_uid: 'alice',
      channel_id: 'grp',
      channel_type: 2,
      payload: 'aGk=',
      header: { no_persist: 1 },
    });
    expect(r.json).toEqual({ message_id: 0, message_seq: 0, reason: 1 });
    expect(await messagesIn('grp', 2)).toBe(before);
  });
});

describe('POST /channel/messagesync', () => {
  it('validates its body', async () => {
    expect((await post(t.api, '/channel/messagesync', { login_uid: '', channel_id: 'grp', channel_type: 2 })).json).toEqual(
      legacy('login_uid不能为空！'),
    );
    expect((await post(t.api, '/channel/messagesync', { login_uid: 'a', channel_id: 'grp', channel_type: 0 })).json).toEqual(
      legacy('channel_type不能为空！'),
    );
    expect((await post(t.api, '/channel/messagesync', { login_uid: 'a', channel_id: 'grp', channel_type: 2, limit: 'x' })).json).toEqual(
      legacy('数据格式有误！'),
    );
  });
  it('needs a live membership', async () => {
    const r = await post(t.api, '/channel/messagesync', { login_uid: 'stranger', channel_id: 'grp', channel_type: 2 });
    expect(r.json).toEqual(legacy('internal/message: valid channel membership required'));
  });
  it('shows a new member only later messages', async () => {
    await post(t.api, '/channel/subscriber_add', { channel_id: 'grp', subscribers: ['late'] });
    expect(await messagesIn('grp', 2, 'late')).toBe(0);
    await post(t.api, '/message/send', { from_uid: 'alice', channel_id: 'grp', channel_type: 2, payload: 'bmV3' });
    const r = await post(t.api, '/channel/messagesync', { login_uid: 'late', channel_id: 'grp', channel_type: 2, pull_mode: 1 });
    expect(r.json.messages.map((m: { payload: string }) => m.payload)).toEqual(['bmV3']);
  });
});

describe('ops and routing', () => {
  it('health, readiness, route, CORS (off by default) and unknown paths', async () => {
    expect((await get(t.api, '/healthz')).json).toEqual({ status: 'ok' });
    expect((await get(t.api, '/readyz')).json).toEqual({ ready: true, parts: { routes: true, slots: true, channels: true } });
    const route = await get(t.api, '/route?uid=alice');
    expect(route.json).toEqual({ tcp_addr: expect.stringMatching(/^127\.0\.0\.1:\d+$/), ws_addr: t.ws, wss_addr: '' });
    expect((await get(t.api, '/route?node_id=9')).json).toEqual(legacy('节点参数有误！'));
    const missing = await get(t.api, '/nope');
    expect([missing.status, missing.text]).toEqual([404, '404 page not found']);
    const pre = await fetch(`${t.api}/message/send`, { method: 'OPTIONS', headers: { origin: 'http://x.test' } });
    expect(pre.status).toBe(403);
    expect(pre.headers.get('access-control-allow-origin')).toBeNull();
  });
});
