import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, startTestServer, type TestServer } from './helpers.ts';
import { call } from './ops-helpers.ts';

/** HTTP answers the contract fixes (http-api.md, issue 13's audit findings), sent as real requests. */
let t: TestServer;
const BENCH_MAX = 2048;
beforeAll(async () => {
  t = await startTestServer({
    PARLEY_OBSERVABILITY_DEBUG_API_ENABLE: 'true',
    PARLEY_BENCH_API_ENABLE: 'true',
    PARLEY_BENCH_API_MAX_PAYLOAD_BYTES: String(BENCH_MAX),
    PARLEY_CLUSTER_INITIAL_SLOT_COUNT: '12',
  });
});
afterAll(() => t.close());

const legacy = (msg: string) => ({ msg, status: 400, code: expect.any(String) });
const b64 = (text: string) => Buffer.from(text).toString('base64');
const send = async (from: string, channel: string, type: number, text: string) => {
  const r = await post(t.api, '/message/send', { from_uid: from, channel_id: channel, channel_type: type, payload: b64(text) });
  expect(r.json.reason).toBe(1);
  return r.json.message_seq as number;
};

describe('a known path with the wrong method', () => {
  it.each([
    ['DELETE', '/route', 'GET'],
    ['GET', '/message/send', 'POST'],
    ['POST', '/healthz', 'GET'],
    ['POST', '/top/v1/snapshot', 'GET'],
    ['PUT', '/channel/messagesync', 'POST'],
    ['POST', '/debug/config', 'GET'],
    ['GET', '/bench/v1/users/tokens', 'POST'],
  ])('%s %s answers 405 method not allowed', async (method, path, allowed) => {
    const r = await call(t.api + path, { method });
    expect([r.status, r.text]).toEqual([405, '405 method not allowed']);
    expect(r.headers.get('allow')?.split(', ')).toContain(allowed);
  });

  it('still answers 404 for an unknown path and 204 to any OPTIONS', async () => {
    const r = await call(`${t.api}/nope`, { method: 'DELETE' });
    expect([r.status, r.text]).toEqual([404, '404 page not found']);
    expect((await call(`${t.api}/route`, { method: 'OPTIONS' })).status).toBe(204);
  });
});

describe('channel message pulls of a person channel without membership', () => {
  it('/channel/messagesync answers 400 valid channel membership required', async () => {
    const r = await post(t.api, '/channel/messagesync', { login_uid: 'pm-a', channel_id: 'pm-b', channel_type: 1, pull_mode: 1 });
    expect([r.status, r.json]).toEqual([400, legacy('internal/message: valid channel membership required')]);
  });

  it('/channel/messagesyncbatch fails as a whole when one item is such a channel', async () => {
    await post(t.api, '/channel', { channel_id: 'pm-g', channel_type: 2, subscribers: ['pm-a'] });
    await send('pm-a', 'pm-g', 2, 'in the group');
    const r = await post(t.api, '/channel/messagesyncbatch', {
      login_uid: 'pm-a',
      items: [
        { channel_id: 'pm-g', channel_type: 2, pull_mode: 1 },
        { channel_id: 'pm-b', channel_type: 1, pull_mode: 1 },
      ],
    });
    expect([r.status, r.json]).toEqual([400, legacy('internal/message: valid channel membership required')]);
  });

  it('reads the channel once its first message made both participants members', async () => {
    await send('pm-b', 'pm-a', 1, 'hello');
    const r = await post(t.api, '/channel/messagesync', { login_uid: 'pm-a', channel_id: 'pm-b', channel_type: 1, pull_mode: 1 });
    expect(r.status).toBe(200);
    expect(r.json.messages.map((m: { payload: string }) => m.payload)).toEqual([b64('hello')]);
  });
});

describe('/conversation/sync last_msg_seqs', () => {
  type Item = { channel_id: string; channel_type: number; last_msg_seq: number; recents?: Array<{ message_seq: number }> };
  const sync = (body: object) => post(t.api, '/conversation/sync', { uid: 'cs-a', msg_count: 10, ...body });

  beforeAll(async () => {
    for (const text of ['p1', 'p2', 'p3']) await send('cs-b', 'cs-a', 1, text);
    await post(t.api, '/channel', { channel_id: 'cs-g', channel_type: 2, subscribers: ['cs-a', 'cs-b'] });
    for (const text of ['g1', 'g2']) await send('cs-b', 'cs-g', 2, text);
  });

  it.each(['bad', 'x:2:abc', 'x:2', ':2:1', 'x:2:1|', 'x:256:1', 'x:2:-1', 'x:2:18446744073709551616', 'a@b@c:1:1', 'zz@yy:1:1'])(
    'answers 400 invalid last_msg_seqs for %j',
    async (value) => {
      const r = await sync({ last_msg_seqs: value });
      expect([r.status, r.json]).toEqual([400, legacy('invalid last_msg_seqs')]);
    },
  );

  it('leaves out conversations the client holds up to their newest message', async () => {
    const all = (await sync({})).json as Item[];
    expect(all.map((c) => [c.channel_id, c.last_msg_seq]).sort()).toEqual([
      ['cs-b', 3],
      ['cs-g', 2],
    ]);
    const r = await sync({ last_msg_seqs: 'cs-b:1:3|cs-g:2:2' });
    expect([r.status, r.json]).toEqual([200, []]);
    const canonical = await sync({ last_msg_seqs: `${'cs-a@cs-b'}:1:3` });
    expect((canonical.json as Item[]).map((c) => c.channel_id)).toEqual(['cs-g']);
  });

  it('returns a conversation the client is behind on, with only the recents it lacks', async () => {
    const r = await sync({ last_msg_seqs: 'cs-b:1:1|cs-g:2:9' });
    expect(r.status).toBe(200);
    const items = r.json as Item[];
    expect(items.map((c) => c.channel_id)).toEqual(['cs-b']);
    expect(items[0]).toMatchObject({ last_msg_seq: 3, channel_type: 1 });
    expect(items[0]!.recents!.map((m) => m.message_seq)).toEqual([3, 2]);
  });

  it('treats a blank value as nothing known', async () => {
    expect(((await sync({ last_msg_seqs: '  ' })).json as Item[]).length).toBe(2);
  });
});

describe('/channel/info (deprecated) validates nothing and upserts metadata', () => {
  it('accepts an empty channel id, a zero type and a missing id', async () => {
    for (const body of [
      { channel_id: '', channel_type: 2 },
      { channel_id: 'ci-1', channel_type: 0 },
      { ban: 1 },
      { channel_id: 'a#b@c', channel_type: 2 },
    ]) {
      const r = await post(t.api, '/channel/info', body);
      expect([r.status, r.json], JSON.stringify(body)).toEqual([200, { status: 200 }]);
    }
  });

  it('upserts the flags it is given', async () => {
    await post(t.api, '/channel', { channel_id: 'ci-g', channel_type: 2, subscribers: ['ci-u'] });
    expect((await post(t.api, '/channel/info', { channel_id: 'ci-g', channel_type: 2, send_ban: 0, ban: 1 })).json).toEqual({
      status: 200,
    });
    const r = await post(t.api, '/message/send', { from_uid: 'ci-u', channel_id: 'ci-g', channel_type: 2, payload: b64('x') });
    expect(r.json.reason).toBe(19);
  });

  it('still refuses a body that does not bind', async () => {
    const r = await post(t.api, '/channel/info', { channel_id: 5, channel_type: 2 });
    expect([r.status, r.json]).toEqual([400, legacy('数据格式有误！')]);
  });
});

describe('/debug/config', () => {
  it('reports the cluster figures its own values show', async () => {
    const r = await call(`${t.api}/debug/config`);
    expect(r.status).toBe(200);
    const v = r.json.values;
    expect([
      v['cluster.initial_slot_count'],
      v['cluster.hash_slot_count'],
      v['cluster.slot_replica_n'],
      v['cluster.channel_replica_n'],
    ]).toEqual([12, 256, 1, 1]);
    expect(r.json).toMatchObject({ initial_slot_count: 12, hash_slot_count: 256, slot_replica_count: 1, channel_replica_count: 1 });
  });
});

/** Posts `body` with `Transfer-Encoding: chunked` (no Content-Length), in 512-byte chunks. */
function postChunked(url: string, body: string): Promise<{ status: number; json: unknown }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
    });
    req.on('error', reject);
    for (let i = 0; i < body.length; i += 512) req.write(body.slice(i, i + 512));
    req.end();
  });
}

describe('an oversized bench body', () => {
  const tooLarge = { status: 413, msg: `payload too large: max ${BENCH_MAX} bytes`, code: 'payload_too_large' };
  const body = JSON.stringify({ run_id: 'r', batch_id: 'b', users: [{ uid: 'u', token: 'x'.repeat(4 * BENCH_MAX) }] });

  it('answers the same 413 whether it is chunked or has a Content-Length', async () => {
    const chunked = await postChunked(`${t.api}/bench/v1/users/tokens`, body);
    expect(chunked).toEqual({ status: 413, json: tooLarge });
    const sized = await call(`${t.api}/bench/v1/users/tokens`, { body });
    expect([sized.status, sized.json]).toEqual([413, tooLarge]);
  });

  it('takes a chunked body within the limit', async () => {
    const ok = await postChunked(
      `${t.api}/bench/v1/users/tokens`,
      JSON.stringify({ run_id: 'r', batch_id: 'b', users: [{ uid: 'bench-u', token: 't' }] }),
    );
    expect(ok).toEqual({ status: 200, json: { run_id: 'r', batch_id: 'b', accepted: 1 } });
  });
});
