import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOP_ALWAYS_SECTIONS, TOP_VIEW_SECTIONS, TOP_VIEWS, TopSnapshot } from '@parley/shared';
import { startTestServer, type TestServer } from './helpers.ts';
import { call, schemaErrors, waitFor } from './ops-helpers.ts';

const OPTIONAL = ['traffic', 'clients', 'pressure', 'channelv2', 'storage', 'delivery'];

describe('GET /top/v1/snapshot', () => {
  let t: TestServer;
  const snap = (query = '') => call(`${t.api}/top/v1/snapshot${query}`);

  beforeAll(async () => {
    t = await startTestServer({ PARLEY_TOP_COLLECT_INTERVAL: '100ms' });
    await waitFor(async () => ((await snap('?window=2s')).status === 200 ? true : undefined));
  });
  afterAll(async () => t.close());

  it.each([
    ['?window=abc', 'window must be a duration', 'invalid_window'],
    ['?window=10', 'window must be a duration', 'invalid_window'],
    ['?window=1s', 'window must be at least 2s', 'invalid_window'],
    ['?window=1999ms', 'window must be at least 2s', 'invalid_window'],
    ['?view=bogus', 'invalid view', 'invalid_view'],
    ['?view=ALL', 'invalid view', 'invalid_view'],
    ['?limit=0', 'limit must be positive', 'invalid_limit'],
    ['?limit=-3', 'limit must be positive', 'invalid_limit'],
    ['?limit=2.5', 'limit must be positive', 'invalid_limit'],
    ['?limit=x', 'limit must be positive', 'invalid_limit'],
  ])('answers 400 for %s', async (query, error, code) => {
    const r = await snap(query);
    expect(r.status).toBe(400);
    expect(r.json).toEqual({ error, code });
  });

  it('accepts Go durations and empty values as defaults', async () => {
    for (const q of ['?window=2s', '?window=1m30s', '?window=2500ms', '?window=&view=&limit=', '?window=0.05h']) {
      const r = await snap(q);
      expect(r.status, q).toBe(200);
    }
  });

  it.each(TOP_VIEWS)('view=%s returns its sections and validates against the shared schema', async (view) => {
    const r = await snap(`?view=${view}&window=2s`);
    expect(r.status).toBe(200);
    expect(schemaErrors(TopSnapshot, r.json)).toEqual([]);
    expect(r.json.version).toBe('top/v1');
    expect(r.json.scope).toBe('local_node');
    for (const s of TOP_ALWAYS_SECTIONS) expect(r.json[s], s).toBeDefined();
    const expected = TOP_VIEW_SECTIONS[view];
    for (const s of OPTIONAL) expect(r.json[s] !== undefined, `${view}: ${s}`).toBe(expected.includes(s));
  });

  it('defaults to the overview view', async () => {
    const r = await snap();
    expect(r.status).toBe(200);
    expect(
      Object.keys(r.json)
        .filter((k) => OPTIONAL.includes(k))
        .sort(),
    ).toEqual(['clients', 'pressure', 'traffic']);
  });

  it('caps lists by limit and clamps limit above 100 to 100', async () => {
    const c = t.server.ops.collector!;
    const remove = Array.from({ length: 120 }, (_, i) =>
      c.registerQueue(`fake-${i}`, () => ({ component: 'test', pool: `pool-${i}`, queue: 'fake', depth: 1, capacity: 1000 })),
    );
    try {
      const top = async (limit: string) => {
        const r = await waitFor(async () => {
          const x = await snap(`?view=runtime&window=2s&limit=${limit}`);
          return x.json?.pressure?.component_scores?.test !== undefined ? x : undefined;
        });
        return (r.json.pressure.top as unknown[]).length;
      };
      expect(await top('1')).toBe(1);
      expect(await top('7')).toBe(7);
      expect(await top('100')).toBe(100);
      expect(await top('1000')).toBe(100);
      expect(await top('99999999999')).toBe(100);
    } finally {
      for (const r of remove) r();
    }
  });

  it('reports window_seconds as the span of the samples used', async () => {
    const r = await waitFor(async () => {
      const x = await snap('?window=2s&view=all');
      return x.json.window_seconds >= 2 ? x : undefined;
    });
    expect(r.json.window_seconds).toBe(2);
    expect((await snap('?window=1h')).json.window_seconds).toBeLessThanOrEqual(3);
    expect(r.json.sources.collector.available).toBe(true);
    expect(r.json.sources.collector.sample_count).toBeGreaterThanOrEqual(2);
  });
});

describe('top snapshot availability', () => {
  it('answers 503 while the collector is warming up', async () => {
    const t = await startTestServer({ PARLEY_TOP_COLLECT_INTERVAL: '10m' });
    try {
      const r = await call(`${t.api}/top/v1/snapshot`);
      expect(r.status).toBe(503);
      expect(r.json).toEqual({ error: 'top collector warming up', code: 'warming_up' });
      expect((await call(`${t.api}/top/v1/snapshot?view=nope`)).status).toBe(400);
    } finally {
      await t.close();
    }
  });

  it('answers 404 when top.api_enable is false', async () => {
    const t = await startTestServer({ PARLEY_TOP_API_ENABLE: 'false' });
    try {
      const r = await call(`${t.api}/top/v1/snapshot`);
      expect(r.status).toBe(404);
      expect(r.json).toEqual({ error: 'top snapshot provider is not configured', code: 'not_configured' });
      expect(t.server.ops.collector).toBeUndefined();
    } finally {
      await t.close();
    }
  });
});
