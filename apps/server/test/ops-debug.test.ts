import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DiagnosticsResult } from '@parley/shared';
import { connectRpc, startTestServer, storeToken, type TestServer } from './helpers.ts';
import { call, schemaErrors } from './ops-helpers.ts';

const TOKEN = 'ops-bench-secret-7f3a';

describe('debug routes disabled', () => {
  it('answer 404 page not found', async () => {
    const t = await startTestServer();
    try {
      for (const path of ['/debug/config', '/debug/pprof', '/debug/pprof/heap', '/debug/goroutines', '/debug/diagnostics/events']) {
        const r = await call(t.api + path);
        expect(r.status, path).toBe(404);
        expect(r.text).toBe('404 page not found');
      }
    } finally {
      await t.close();
    }
  });
});

describe('debug routes with a bearer token', () => {
  let t: TestServer;
  const auth = { authorization: `Bearer ${TOKEN}` };
  const dbg = (path: string, headers: Record<string, string> = auth) => call(t.api + path, { headers });

  beforeAll(async () => {
    t = await startTestServer({ PARLEY_OBSERVABILITY_DEBUG_API_ENABLE: 'true', PARLEY_BENCH_API_TOKEN: TOKEN });
    await storeToken(t.api, 'dbg-a', 'tok-a');
    const a = await connectRpc(t.ws, 'dbg-a', 'tok-a');
    for (let i = 1; i <= 3; i++) await a.request('send', { channelId: 'dbg-b', channelType: 1, clientMsgNo: `dbg-${i}`, payload: { i } });
    a.close();
  });
  afterAll(async () => t.close());

  it('answers 401 without, or with a wrong, Bearer credential', async () => {
    const variants: Record<string, string>[] = [
      {},
      { authorization: 'Bearer nope' },
      { authorization: TOKEN },
      { authorization: `Bearer ${TOKEN}x` },
      { authorization: `bearer ${TOKEN}` },
    ];
    for (const headers of variants) {
      for (const path of ['/debug/config', '/debug/pprof', '/debug/pprof/heap', '/debug/diagnostics/events']) {
        const r = await dbg(path, headers);
        expect(r.status, `${path} ${JSON.stringify(headers)}`).toBe(401);
        expect(r.json).toEqual({ error: 'bench bearer token required', code: 'unauthorized' });
      }
    }
  });

  it('serves the effective config with secrets redacted', async () => {
    const r = await dbg('/debug/config');
    expect(r.status).toBe(200);
    expect(r.json.debug_api_enable).toBe(true);
    expect(r.json.node_id).toBe(1);
    expect(r.json.values['bench.api_token']).toBe('[redacted]');
    expect(r.text).not.toContain(TOKEN);
    expect(r.json.values['top.collect_interval']).toBe('1s');
  });

  it('serves the cluster view and the active-handle dumps', async () => {
    expect((await dbg('/debug/cluster')).json).toEqual({ node_id: 1, state_revision: 0, slots: [] });
    const text = await dbg('/debug/goroutines');
    expect(text.text).toMatch(/^goroutine profile: total \d+/);
    expect(text.text).toContain('TCPServerWrap');
    const summary = await dbg('/debug/goroutines/summary');
    expect(summary.json.process_total).toBeGreaterThan(0);
    expect(summary.json.modules.some((m: { module: string }) => m.module === 'TCPServerWrap')).toBe(true);
    const index = await call(`${t.api}/debug/pprof`, { method: 'POST', headers: auth });
    expect(index.status).toBe(200);
    expect(index.text).toContain('profile:');
    expect((await dbg('/debug/pprof/mutex')).status).toBe(404);
  });

  it('finds a message by client_msg_no, trace id, and channel key + seq', async () => {
    const byNo = await dbg('/debug/diagnostics/message?client_msg_no=dbg-2');
    expect(byNo.status).toBe(200);
    expect(schemaErrors(DiagnosticsResult, byNo.json)).toEqual([]);
    expect(byNo.json.status).toBe('ok');
    const ev = byNo.json.events[0];
    expect(ev).toMatchObject({ stage: 'append', client_msg_no: 'dbg-2', message_seq: 2, result: 'ok', channel_key: '1&dbg-b@dbg-a' });
    expect(Object.keys(ev)).not.toContain('from_uid');

    const byTrace = await dbg(`/debug/diagnostics/trace/${ev.trace_id}`);
    expect(byTrace.json.events).toHaveLength(1);
    expect(byTrace.json.trace_id).toBe(ev.trace_id);
    const bySeq = await dbg(`/debug/diagnostics/message?channel_key=${encodeURIComponent(ev.channel_key)}&message_seq=2`);
    expect(bySeq.json.events[0].client_msg_no).toBe('dbg-2');
    expect((await dbg('/debug/diagnostics/trace/123')).json.status).toBe('not_found');

    const commits = await dbg('/debug/diagnostics/events?stage=commit&limit=2');
    expect(commits.json.events.length).toBeGreaterThanOrEqual(1);
    expect(commits.json.events.length).toBeLessThanOrEqual(2);
    const mine = await dbg('/debug/diagnostics/events?uid=dbg-a&result=ok');
    expect(mine.json.events).toHaveLength(3);
  });

  it.each([
    ['/debug/diagnostics/message?client_msg_no=x&message_seq=1&channel_key=k', 'invalid message selector'],
    ['/debug/diagnostics/message', 'missing diagnostics message lookup'],
    ['/debug/diagnostics/message?channel_key=k&message_seq=zero', 'invalid message_seq'],
    ['/debug/diagnostics/message?channel_key=k&message_seq=0', 'invalid message_seq'],
    ['/debug/diagnostics/events?result=bogus', 'invalid result'],
    ['/debug/diagnostics/events?limit=0', 'invalid limit'],
    ['/debug/diagnostics/events?limit=501', 'invalid limit'],
    ['/debug/pprof/profile?seconds=abc', 'seconds must be between 1 and 60'],
  ])('answers 400 for %s', async (path, error) => {
    const r = await dbg(path);
    expect(r.status).toBe(400);
    expect(r.json.error).toBe(error);
  });

  it('returns a V8 CPU profile that loads as .cpuprofile JSON', async () => {
    const r = await dbg('/debug/pprof/profile?seconds=1');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/application\/json/);
    const p = r.json;
    expect(Array.isArray(p.nodes)).toBe(true);
    expect(p.nodes[0].callFrame.functionName).toBe('(root)');
    expect(p.endTime - p.startTime).toBeGreaterThanOrEqual(900_000);
    expect(Array.isArray(p.samples) && Array.isArray(p.timeDeltas)).toBe(true);
  }, 10_000);

  it('returns a V8 heap snapshot that loads as .heapsnapshot JSON', async () => {
    const r = await dbg('/debug/pprof/heap');
    expect(r.status).toBe(200);
    const h = r.json;
    expect(h.snapshot.meta.node_fields).toContain('name');
    expect(h.snapshot.node_count).toBe(h.nodes.length / h.snapshot.meta.node_fields.length);
    expect(h.strings.length).toBeGreaterThan(0);
  }, 20_000);
});
