import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JsonRpcClient } from '@parley/protocol/jsonrpc';
import { TopSnapshot } from '@parley/shared';
import { connectRpc, startTestServer, storeToken, type TestServer } from './helpers.ts';
import type { Sample } from '../src/observe/collector.ts';
import { call, schemaErrors, waitFor } from './ops-helpers.ts';

const SENDS = 300;
const REJECTED = 20;
const BAD_CONNECTS = 3;

describe('top snapshot under real load', () => {
  let t: TestServer;
  const rtts: number[] = [];
  /** The collector's newest sample. */
  const newest = () => {
    const samples = t.server.ops.collector!.samples;
    return samples.at(samples.size - 1)!;
  };

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
    // The collector has sampled everything the test did; then it stops, so the snapshot and the
    // counters below are read from the same samples however late its ticks ran on a busy machine.
    await waitFor(async () => {
      const last = newest();
      return last.sends >= SENDS + REJECTED && last.deliveries >= SENDS && last.authFailures >= BAD_CONNECTS ? true : undefined;
    }, 10_000);
    t.server.ops.collector!.stop();
  }, 30_000);
  afterAll(async () => t.close());

  it('reports the rates, percentiles and connections the test produced', async () => {
    // The snapshot and the samples it was computed from (a tick already under way when the
    // collector stopped may add one more sample: then read both again).
    let r: Awaited<ReturnType<typeof call>>;
    let samples: { first: Sample; last: Sample; count: number };
    do {
      r = await call(`${t.api}/top/v1/snapshot?view=all&window=5m`);
      const ring = t.server.ops.collector!.samples;
      samples = { first: ring.at(0)!, last: ring.at(ring.size - 1)!, count: ring.size };
    } while (r.json?.sources?.collector?.sample_count !== samples.count);
    expect(r.status).toBe(200);
    expect(schemaErrors(TopSnapshot, r.json)).toEqual([]);
    const { traffic, clients } = r.json;
    const { first, last } = samples;
    // The window reaches back to the collector's first sample, taken before the test did anything:
    // the counters' deltas are exactly what the test produced.
    const delta = (k: 'sends' | 'acks' | 'ackErrors' | 'appends' | 'deliveries' | 'authFailures') => last[k] - first[k];
    expect([delta('sends'), delta('acks'), delta('ackErrors'), delta('appends'), delta('deliveries'), delta('authFailures')]).toEqual([
      SENDS + REJECTED,
      SENDS,
      REJECTED,
      SENDS,
      SENDS,
      BAD_CONNECTS,
    ]);
    // Each rate is its delta over the samples' own span (rates are rounded to 0.001/s).
    const span = (last.mono - first.mono) / 1000;
    expect(r.json.window_seconds).toBe(Math.round(span));
    const rateOf = (rate: number, counted: number) =>
      expect(Math.abs(rate * span - counted), `rate ${rate} × ${span}s vs ${counted}`).toBeLessThanOrEqual(0.0005 * span + 1e-9);
    rateOf(traffic.send_per_sec, SENDS + REJECTED);
    rateOf(traffic.sendack_per_sec, SENDS);
    rateOf(traffic.sendack_error_per_sec, REJECTED);
    expect(traffic.sendack_error_rate).toBeCloseTo(REJECTED / (SENDS + REJECTED), 3);
    rateOf(traffic.append_per_sec, SENDS);
    rateOf(traffic.deliver_per_sec, SENDS);
    expect(traffic.fanout_rate).toBe(1);
    rateOf(clients.auth_fail_per_sec, BAD_CONNECTS);
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
    // 6% sendack errors is past the 5% threshold: at least degraded, with its reason. A machine
    // busy enough to load the event loop adds runtime pressure, which the verdict takes too.
    const LEVELS = ['ok', 'busy', 'degraded', 'critical'];
    const worst = Math.max(LEVELS.indexOf('degraded'), LEVELS.indexOf(r.json.pressure.overall_level));
    expect(r.json.verdict.level, JSON.stringify(r.json.verdict)).toBe(LEVELS[worst]);
    expect(r.json.verdict.reasons).toContain('sendack error rate >= 5%');
  });
});
