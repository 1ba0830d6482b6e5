import { openStoreReader } from '@parley/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, startTestServer, storeToken, type TestServer } from './helpers.ts';

/** Deterministic PRNG (mulberry32) so a failure replays. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  maxItems?: number;
  anyOf?: Schema[];
};

/** A value that the schema rejects, chosen at random among the ways to be wrong. */
function invalid(s: Schema, r: () => number): unknown {
  const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)]!;
  if (s.anyOf) return pick([{ nested: true }, [[1]], true]);
  switch (s.type) {
    case 'string':
      return pick<unknown>([
        123,
        true,
        null,
        { a: 1 },
        ['x'],
        ...(s.maxLength ? ['x'.repeat(s.maxLength + 1 + Math.floor(r() * 5000))] : []),
      ]);
    case 'integer':
      return pick<unknown>([
        '1',
        true,
        false,
        1.5,
        null,
        { n: 1 },
        [1],
        ...(s.minimum !== undefined ? [s.minimum - 1 - Math.floor(r() * 1000)] : []),
        ...(s.maximum !== undefined ? [s.maximum + 1 + Math.floor(r() * 1000)] : []),
        '9'.repeat(40),
      ]);
    case 'boolean':
      return pick<unknown>([1, 'true', null]);
    case 'array':
      return pick<unknown>([
        'not an array',
        { length: 1 },
        7,
        ...(s.items ? [[invalid(s.items, r)]] : []),
        ...(s.maxItems !== undefined && s.maxItems < 20_000 ? [Array.from({ length: s.maxItems + 1 }, () => 'u')] : []),
      ]);
    case 'object':
      return pick<unknown>(['x', 5, [1, 2], true]);
    default:
      return undefined;
  }
}

function invalidBody(schema: Schema, r: () => number): string {
  const roll = r();
  if (roll < 0.08) return pick(r, ['{', '{"a":', 'nul', '[1,', '"\\u12"', '']);
  if (schema.type === 'array') return JSON.stringify(invalid(schema, r));
  if (roll < 0.16) return JSON.stringify(pick(r, [[], 'text', 42, true, null]));
  const props = Object.entries(schema.properties ?? {}).filter(([, p]) => invalid(p, r) !== undefined);
  const body: Record<string, unknown> = {};
  const count = 1 + Math.floor(r() * Math.min(3, props.length));
  for (let i = 0; i < count && props.length > 0; i++) {
    const [name, p] = props[Math.floor(r() * props.length)]!;
    body[name] = invalid(p, r);
  }
  return JSON.stringify(body);
}

function pick<T>(r: () => number, xs: T[]): T {
  return xs[Math.floor(r() * xs.length)]!;
}

/** Operations routes (top answers 503 while warming up, by contract); the business API is what is fuzzed here. */
const OPS = /^\/(healthz|readyz|metrics|top|debug|bench|docs)(\/|$)/;

const TABLES = [
  'devices',
  'channels',
  'memberships',
  'member_lists',
  'messages',
  'channel_log',
  'system_uids',
  'cmd_bindings',
  'message_events',
] as const;

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  await storeToken(t.api, 'seed-user', 'tok');
  await post(t.api, '/channel', { channel_id: 'seed', channel_type: 2, subscribers: ['seed-user'] });
});
afterAll(() => t.close());

/** Rows of every content table, read back through the store (read-only, beside the running server). */
async function rowCounts(): Promise<Record<string, number>> {
  const store = await openStoreReader(t.dataDir);
  try {
    const counts: Record<string, number> = {};
    for (const table of TABLES) counts[table] = await store.snapshot.count(table);
    return counts;
  } finally {
    await store.close();
  }
}

describe('random invalid bodies to every operation', () => {
  it('never get a 5xx and never write anything (fixed seed)', async () => {
    const r = rng(0x5eed);
    const app = t.server.app;
    const routes = app.registeredRoutes.filter((route) => route.method === 'POST' && route.body && !OPS.test(route.url));
    expect(routes.length).toBeGreaterThanOrEqual(40);
    const before = await rowCounts();
    const statuses = new Map<number, number>();
    for (const route of routes) {
      for (let i = 0; i < 40; i++) {
        const payload = invalidBody(route.body as Schema, r);
        const res = await app.inject({ method: 'POST', url: route.url, payload, headers: { 'content-type': 'application/json' } });
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
        expect(res.statusCode, `${route.url} ${payload.slice(0, 200)} → ${res.body.slice(0, 200)}`).toBeLessThan(500);
        expect(res.statusCode, `${route.url} accepted ${payload.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
      }
    }
    for (const route of app.registeredRoutes.filter((x) => x.method === 'GET' && !OPS.test(x.url))) {
      for (const q of ['?channel_type=abc', '?channel_id=%00&channel_type=999999', `?login_uid=${'x'.repeat(500)}`, '?node_id=-1']) {
        const res = await app.inject({ method: 'GET', url: route.url.replace(/\/:.*$/, '/x') + q });
        expect(res.statusCode, `${route.url}${q}`).toBeLessThan(500);
      }
    }
    expect(await rowCounts()).toEqual(before);
    expect([...statuses.keys()].every((s) => s === 400 || s === 413)).toBe(true);
  }, 60_000);
});
