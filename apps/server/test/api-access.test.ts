import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTE_RULES } from '../src/http/route-scopes.ts';
import { call } from './ops-helpers.ts';
import { startTestServer, type TestServer } from './helpers.ts';

const TOKENS_KEY = 'tokens-key-0123456789abcdef';
const READ_KEY = 'read-key-0123456789abcdefgh';
const CHANNELS_KEY = 'channels-key-0123456789abcd';
const ADMIN_KEY = 'admin-key-0123456789abcdefg';

let t: TestServer;
const logLines: string[] = [];

beforeAll(async () => {
  t = await startTestServer(
    {
      PARLEY_API_KEYS: JSON.stringify([
        { name: 'issuer', secret: TOKENS_KEY, scopes: ['tokens'] },
        { name: 'reader', secret: READ_KEY, scopes: ['read'] },
        { name: 'groups', secret: CHANNELS_KEY, scopes: ['channels'] },
        { name: 'root', secret: ADMIN_KEY, scopes: ['admin'] },
      ]),
      PARLEY_API_CREDENTIAL_RATE_PER_UID: '3',
      PARLEY_LOG_LEVEL: 'info',
    },
    (line) => logLines.push(line),
  );
});
afterAll(() => t.close());

const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });

describe('API keys and scopes', () => {
  it('refuses a request with no key or an unknown key (401), naming neither', async () => {
    const none = await call(`${t.api}/user/token`, { body: { uid: 'alice', token: 'a' } });
    expect(none.status).toBe(401);
    expect(none.json).toMatchObject({ status: 401, code: 'unauthorized' });
    const wrong = await call(`${t.api}/user/token`, { body: { uid: 'alice', token: 'a' }, headers: bearer('not-a-key-at-all-000000') });
    expect(wrong.status).toBe(401);
    expect(wrong.text).not.toContain('not-a-key');
  });

  it('a key without the tokens scope cannot set a token; one with it can, as Bearer or as v2’s token header', async () => {
    const denied = await call(`${t.api}/user/token`, {
      body: { uid: 'alice', token: 'secret-a', device_flag: 1 },
      headers: bearer(READ_KEY),
    });
    expect(denied.status).toBe(403);
    expect(denied.json).toMatchObject({ code: 'forbidden', msg: 'API key "reader" lacks the "tokens" scope' });
    const channels = await call(`${t.api}/user/token`, {
      body: { uid: 'alice', token: 'secret-a', device_flag: 1 },
      headers: bearer(CHANNELS_KEY),
    });
    expect(channels.status).toBe(403);

    expect(
      (await call(`${t.api}/user/token`, { body: { uid: 'alice', token: 'secret-a', device_flag: 1 }, headers: bearer(TOKENS_KEY) }))
        .status,
    ).toBe(200);
    expect(
      (await call(`${t.api}/user/token`, { body: { uid: 'bob', token: 'secret-b', device_flag: 1 }, headers: { token: TOKENS_KEY } }))
        .status,
    ).toBe(200);
    expect(
      (await call(`${t.api}/user/token`, { body: { uid: 'carol', token: 'secret-c', device_flag: 1 }, headers: bearer(ADMIN_KEY) })).status,
    ).toBe(200);
  });

  it('each scope opens its own routes only', async () => {
    const group = { channel_id: 'g1', channel_type: 2, subscribers: ['alice', 'bob'] };
    expect((await call(`${t.api}/channel`, { body: group, headers: bearer(TOKENS_KEY) })).status).toBe(403);
    expect((await call(`${t.api}/channel`, { body: group, headers: bearer(CHANNELS_KEY) })).status).toBe(200);
    const sync = { login_uid: 'alice', channel_id: 'g1', channel_type: 2, pull_mode: 1, limit: 10 };
    expect((await call(`${t.api}/channel/messagesync`, { body: sync, headers: bearer(CHANNELS_KEY) })).status).toBe(403);
    expect((await call(`${t.api}/channel/messagesync`, { body: sync, headers: bearer(READ_KEY) })).status).toBe(200);
    const send = { from_uid: 'alice', channel_id: 'g1', channel_type: 2, payload: Buffer.from('{"type":1}').toString('base64') };
    expect((await call(`${t.api}/message/send`, { body: send, headers: bearer(READ_KEY) })).status).toBe(403);
    expect((await call(`${t.api}/message/send`, { body: send, headers: bearer(ADMIN_KEY) })).status).toBe(200);
    expect((await call(`${t.api}/user/systemuids_add`, { body: { uids: ['sys'] }, headers: bearer(CHANNELS_KEY) })).status).toBe(403);
    expect((await call(`${t.api}/user/systemuids_add`, { body: { uids: ['sys'] }, headers: bearer(ADMIN_KEY) })).status).toBe(200);
  });

  it('leaves health, readiness and top open, as the contract says', async () => {
    expect((await call(`${t.api}/healthz`)).status).toBe(200);
    expect((await call(`${t.api}/readyz`)).status).toBe(200);
    expect((await call(`${t.api}/metrics`)).status).toBe(200);
  });

  it('gives every one of the 48 registered business routes a scope', () => {
    const business = t.server.app.registeredRoutes.filter(
      (r) => r.method !== 'OPTIONS' && !/^\/(healthz|readyz|metrics|top|debug|bench|docs)(\/|$)/.test(r.url),
    );
    expect(business).toHaveLength(48);
    for (const r of business) expect(ROUTE_RULES[`${r.method} ${r.url}`], `${r.method} ${r.url}`).toBeDefined();
  });

  it('rate-limits credential operations per uid (429 with Retry-After)', async () => {
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 5; i++) {
      const r = await call(`${t.api}/user/token`, { body: { uid: 'dave', token: `t${i}`, device_flag: 1 }, headers: bearer(TOKENS_KEY) });
      statuses.push(r.status);
      if (r.status === 429) retryAfter = r.headers.get('retry-after');
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    expect(Number(retryAfter)).toBeGreaterThan(0);
    // Another uid is not held back by dave's bucket.
    expect(
      (await call(`${t.api}/user/token`, { body: { uid: 'erin', token: 'e', device_flag: 1 }, headers: bearer(TOKENS_KEY) })).status,
    ).toBe(200);
  });

  it('writes one audit line per credential and membership change: key, route, uid; never the token', async () => {
    await call(`${t.api}/user/token`, {
      body: { uid: 'frank', token: 'frank-plaintext-token', device_flag: 1 },
      headers: bearer(TOKENS_KEY),
    });
    await call(`${t.api}/channel/subscriber_add`, {
      body: { channel_id: 'g1', channel_type: 2, subscribers: ['frank'] },
      headers: bearer(CHANNELS_KEY),
    });
    const audits = logLines.filter((l) => l.includes('"msg":"audit"')).map((l) => JSON.parse(l));
    expect(audits).toContainEqual(
      expect.objectContaining({ audit: 'credential', key: 'issuer', route: 'POST /user/token', uid: 'frank', status: 200 }),
    );
    expect(audits).toContainEqual(
      expect.objectContaining({
        audit: 'membership',
        key: 'groups',
        route: 'POST /channel/subscriber_add',
        channel_id: 'g1',
        subscribers_count: 1,
      }),
    );
    const all = logLines.join('\n');
    for (const secret of ['frank-plaintext-token', TOKENS_KEY, CHANNELS_KEY, READ_KEY, ADMIN_KEY]) expect(all).not.toContain(secret);
  });
});

describe('browser requests', () => {
  it('refuses a form-encoded cross-origin request, and a JSON one from an unlisted origin', async () => {
    const form = await fetch(`${t.api}/user/token`, {
      method: 'POST',
      headers: { origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded', ...bearer(TOKENS_KEY) },
      body: 'uid=alice&token=owned',
    });
    expect(form.status).toBe(403);
    expect(form.headers.get('access-control-allow-origin')).toBeNull();
    const preflight = await fetch(`${t.api}/user/token`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(403);
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('answers 415 to any body that is not application/json, even with a valid key and no Origin', async () => {
    for (const type of ['application/x-www-form-urlencoded', 'text/plain', 'multipart/form-data; boundary=x']) {
      const r = await call(`${t.api}/user/token`, {
        body: '{"uid":"alice","token":"owned"}',
        headers: { 'content-type': type, ...bearer(TOKENS_KEY) },
      });
      expect(r.status, type).toBe(415);
      expect(r.json).toMatchObject({ status: 415, code: 'unsupported_media_type' });
    }
  });
});

describe('listed CORS origins', () => {
  it('answers an allowed origin’s preflight and requests with its own origin', async () => {
    const s = await startTestServer({ PARLEY_API_CORS_ORIGINS: 'https://app.example' });
    try {
      const pre = await fetch(`${s.api}/message/send`, {
        method: 'OPTIONS',
        headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
      });
      expect(pre.status).toBe(204);
      expect(pre.headers.get('access-control-allow-origin')).toBe('https://app.example');
      const r = await call(`${s.api}/user/systemuids`, { headers: { origin: 'https://app.example' } });
      expect([r.status, r.headers.get('access-control-allow-origin')]).toEqual([200, 'https://app.example']);
      expect((await call(`${s.api}/user/systemuids`, { headers: { origin: 'https://other.example' } })).status).toBe(403);
      const health = await call(`${s.api}/healthz`, { headers: { origin: 'https://other.example' } });
      expect([health.status, health.headers.get('access-control-allow-origin')]).toEqual([200, null]);
    } finally {
      await s.close();
    }
  });
});
