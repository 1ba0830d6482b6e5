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
      items: [{ channel_id: 'pm-g', channel_type: 2, pull_mode: 1 }, { channel_id: 'pm-b', channel_type: 1, pull_mode: 1 }],
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
    const ok = await postChunked(`${t.api}/bench/v1/users/tokens`, JSON.stringify({ run_id: 'r', batch_id: 'b', users: [{ uid: 'bench-u', token: 't' }] }));
    expect(ok).toEqual({ status: 200, json: { run_id: 'r', batch_id: 'b', accepted: 1 } });
  });
});
