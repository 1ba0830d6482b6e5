import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JsonRpcClient } from '@parley/protocol/jsonrpc';
import { TopSnapshot } from '@parley/shared';
import { connectRpc, startTestServer, storeToken, type TestServer } from './helpers.ts';
import { call, schemaErrors, waitFor } from './ops-helpers.ts';

const SENDS = 300;
const REJECTED = 20;
const BAD_CONNECTS = 3;

const INTERVAL_S = 0.1;

describe('top snapshot under real load', () => {
  let t: TestServer;
  const rtts: number[] = [];

  beforeAll(async () => {
    t = await startTestServer({ PARLEY_TOP_COLLECT_INTERVAL: '100ms' });
    await storeToken(t.api, 'load-a', 'tok-a');
    await storeToken(t.api, 'load-b', 'tok-b');
    const a = await connectRpc(t.ws, 'load-a', 'tok-a');
    const b = await connectRpc(t.ws, 'load-b', 'tok-b');
    for (let i = 0; i < BAD_CONNECTS; i++) {
      const bad = await JsonRpcClient.open(t.ws);
      await bad.request('connect', { uid: 'load-a', token: 'wrong', deviceFlag: 1 });
      await bad.closed;
    }
    const sendOne = async (i: number) => {
      const started = performance.now();
      const r = await a.request('send', { channelId: 'load-b', channelType: 1, clientMsgNo: `m-${i}`, payload: { i } });
      rtts.push(performance.now() - started);
      if ((r.result as { reasonCode?: number }).reasonCode !== 1) throw new Error(`send ${i} failed: ${JSON.stringify(r)}`);
    };
    for (let i = 0; i < SENDS; i += 10) await Promise.all(Array.from({ length: 10 }, (_, k) => sendOne(i + k)));
    for (let i = 0; i < REJECTED; i++) {
      const r = await a.request('send', { channelId: 'no-such-group', channelType: 2, payload: { i } });
      if ((r.result as { reasonCode?: number }).reasonCode === 1) throw new Error('send to a missing group succeeded');
    }
    await waitFor(async () => (b.pending('recv').length >= SENDS ? true : undefined));
    // Two more ticks so the last sample sees everything.
    await new Promise((r) => setTimeout(r, 250));
  }, 30_000);
  afterAll(async () => t.close());

  it('reports the rates, percentiles and connections the test produced', async () => {
    const r = await call(`${t.api}/top/v1/snapshot?view=all&window=5m`);
    expect(r.status).toBe(200);
    expect(schemaErrors(TopSnapshot, r.json)).toEqual([]);
    const { traffic, clients } = r.json;
    // The window spans (sample_count - 1) ticks of 100 ms; rate × span gives
    // back the count the test produced, within 10% (timer jitter) plus one.
    const span = (r.json.sources.collector.sample_count - 1) * INTERVAL_S;
    expect(Math.abs(r.json.window_seconds - span)).toBeLessThanOrEqual(1);
    const near = (rate: number, expected: number) => {
      expect(Math.abs(rate * span - expected), `rate ${rate} × ${span}s vs ${expected}`).toBeLessThanOrEqual(expected * 0.1 + 1);
    };
    near(traffic.send_per_sec, SENDS + REJECTED);
    near(traffic.sendack_per_sec, SENDS);
    near(traffic.sendack_error_per_sec, REJECTED);
    expect(traffic.sendack_error_rate).toBeCloseTo(REJECTED / (SENDS + REJECTED), 3);
    near(traffic.append_per_sec, SENDS);
    near(traffic.deliver_per_sec, SENDS);
    expect(traffic.fanout_rate).toBe(1);
    near(clients.auth_fail_per_sec, BAD_CONNECTS);
    expect(clients.connections).toBe(2);
    expect(clients.connections_by_protocol).toEqual({ jsonrpc: 2, wkproto: 0 });

    // Append wait (enqueue to durable) is part of each send's round trip:
    // the percentiles are positive and bounded by the client-side RTTs
    // (20% histogram resolution plus 1 ms of slack).
    const sorted = [...rtts].sort((x, y) => x - y);
    expect(traffic.append_p50_ms).toBeGreaterThan(0);
    expect(traffic.append_p50_ms).toBeLessThanOrEqual(sorted[Math.floor(sorted.length * 0.5)]! * 1.2 + 1);
    expect(traffic.append_p99_ms).toBeGreaterThanOrEqual(traffic.append_p50_ms);
    expect(traffic.append_p99_ms).toBeLessThanOrEqual(sorted[sorted.length - 1]! * 1.2 + 1);

    expect(r.json.storage.commit_queues[0].batch_records_p50).toBeGreaterThanOrEqual(1);
    expect(r.json.channelv2.active_total).toBeGreaterThanOrEqual(1);
    expect(r.json.resources.memory_rss_bytes).toBeGreaterThan(0);
    expect(r.json.resources.goroutines).toBeGreaterThan(0);
    // 6% sendack errors is past the 5% threshold: degraded, with its alert.
    expect(r.json.verdict.level).toBe('degraded');
    expect(r.json.verdict.reasons).toContain('sendack error rate >= 5%');
  });
});
