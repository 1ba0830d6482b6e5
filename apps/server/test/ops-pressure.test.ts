import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TopSnapshot } from '@parley/shared';
import { connectRpc, post, startTestServer, storeToken, type TestServer } from './helpers.ts';
import { call, schemaErrors, waitFor } from './ops-helpers.ts';
import { connectSlowClient, type SlowClient } from './slow-client.ts';

type Item = { component: string; pool: string; level: string; score: number; depth: number; capacity: number };
type Alert = {
  id: string;
  kind: string;
  component: string;
  message: string;
  severity: string;
  active: boolean;
  first_seen: string;
  resolved_at?: string;
  evidence: Record<string, string>;
};
const OUTBOUND_ALERT = 'gateway|pressure_high|gateway/outbound pressure';

/** Real messages to `to`, sent over HTTP by a backend; `bytes` of payload each. */
const sender = (t: TestServer, to: string, bytes: number) => {
  const payload = Buffer.alloc(bytes, 0x61).toString('base64');
  return async () => {
    const r = await post(t.api, '/message/send', { from_uid: 'fast', channel_id: to, channel_type: 1, payload });
    expect(r.json.reason).toBe(1);
  };
};
const snapshot = async (t: TestServer) => (await call(`${t.api}/top/v1/snapshot?window=2s&view=all`)).json;
const gatewayItem = (s: { pressure: { top: Item[] } }) => s.pressure.top.find((i) => i.component === 'gateway' && i.pool === 'outbound')!;
const outboundAlert = (list: Alert[] | undefined) => list?.find((a) => `${a.component}|${a.kind}|${a.message}` === OUTBOUND_ALERT);
const RANK = ['ok', 'busy', 'degraded', 'critical'];

describe('a WKProto client that stops reading, with a small outbound bound and fast sampling', () => {
  const BOUND = 262_144;
  let t: TestServer;
  let slow: SlowClient | undefined;

  beforeAll(async () => {
    t = await startTestServer({
      PARLEY_TOP_COLLECT_INTERVAL: '100ms',
      PARLEY_GATEWAY_MAX_OUTBOUND_BYTES: String(BOUND),
      PARLEY_STORE_SYNC: 'normal',
    });
    await storeToken(t.api, 'slow', 'tok-slow');
    await waitFor(async () => ((await call(`${t.api}/top/v1/snapshot?window=2s`)).status === 200 ? true : undefined));
  });
  afterAll(async () => {
    slow?.close();
    await t.close();
  });

  it('shows gateway pressure rising through busy to degraded with a pressure_high alert before the close, which resolves after', async () => {
    slow = await connectSlowClient(t.tcp, 'slow', 'tok-slow');
    slow.stopReading();
    const send = sender(t, 'slow', 8 * 1024);
    const outbound = t.server.ops.inputs.gatewayMetrics.outbound;
    const open = () => t.server.connections().wkproto === 1;

    // Until the kernel's socket buffers are full, the server's own buffer stays empty.
    for (let i = 0; i < 4000 && outbound.current() === 0; i++) await send();
    expect(outbound.current()).toBeGreaterThan(0);

    // Then one message at a time (~4% of the bound each), reading a sample that covers it.
    const seen: Array<{ level: string; depth: number; alert?: Alert; verdict: string[]; open: boolean }> = [];
    for (let i = 0; i < 200 && open(); i++) {
      await send();
      const want = outbound.current();
      const s = await waitFor(async () => {
        const x = await snapshot(t);
        return x && gatewayItem(x).depth >= want ? x : undefined;
      });
      const item = gatewayItem(s);
      seen.push({
        level: item.level,
        depth: item.depth,
        alert: outboundAlert(s.alerts.active),
        verdict: s.verdict.reasons ?? [],
        open: open(),
      });
      if (item.level === 'busy') expect(schemaErrors(TopSnapshot, s)).toEqual([]);
    }
    expect(open()).toBe(false);

    const whileOpen = seen.filter((o) => o.open);
    const levels = whileOpen.map((o) => o.level).filter((l, i, a) => l !== a[i - 1]);
    expect(levels.filter((l) => l !== 'ok').slice(0, 2)).toEqual(['busy', 'degraded']);
    expect(levels.map((l) => RANK.indexOf(l))).toEqual(levels.map((l) => RANK.indexOf(l)).sort());
    const busy = whileOpen.find((o) => o.level === 'busy')!;
    expect(busy.alert).toMatchObject({ severity: 'warn', active: true, evidence: { level: 'busy', capacity: String(BOUND) } });
    expect(busy.verdict).toContain('gateway/outbound pressure');
    const degraded = whileOpen.find((o) => o.level === 'degraded')!;
    expect(degraded.alert).toMatchObject({ id: busy.alert!.id, severity: 'error', active: true, evidence: { level: 'degraded' } });
    expect(degraded.depth).toBeGreaterThanOrEqual(0.8 * BOUND);
    expect(degraded.depth).toBeLessThanOrEqual(BOUND + 64 * 1024);

    // Closed: the buffer is gone, the level returns to ok and the alert resolves (kept in recent).
    const after = await waitFor(async () => {
      const x = await snapshot(t);
      return x && gatewayItem(x).level === 'ok' && !outboundAlert(x.alerts.active) ? x : undefined;
    });
    expect(outboundAlert(after.alerts.recent)).toMatchObject({ id: busy.alert!.id, active: false, resolved_at: expect.any(String) });
    const overflow = (after.alerts.active as Alert[]).find((a) => a.kind === 'session_error');
    expect(overflow?.evidence).toMatchObject({ protocol: 'wkproto', close_reason: 'outbound_overflow', class: 'backpressure' });
  }, 60_000);
});

describe('a JSON-RPC client over WebSocket that stops reading', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({
      PARLEY_TOP_COLLECT_INTERVAL: '100ms',
      PARLEY_GATEWAY_MAX_OUTBOUND_BYTES: '262144',
      PARLEY_STORE_SYNC: 'normal',
    });
    await storeToken(t.api, 'slow-ws', 'tok-ws');
    await waitFor(async () => ((await call(`${t.api}/top/v1/snapshot?window=2s`)).status === 200 ? true : undefined));
  });
  afterAll(() => t.close());

  it('is scored and closed the same way, and the close is a jsonrpc outbound_overflow session error', async () => {
    const rpc = await connectRpc(t.ws, 'slow-ws', 'tok-ws');
    rpc.socket.pause();
    const send = sender(t, 'slow-ws', 8 * 1024);
    const overflows = () => t.server.ops.inputs.gatewayMetrics.sessionErrors.get('jsonrpc.outbound_overflow.backpressure') ?? 0;
    for (let i = 0; i < 4000 && overflows() === 0; i++) await send();
    expect(overflows()).toBe(1);
    // A WebSocket close waits for the handshake; a client that does not read is dropped within 5 s.
    await waitFor(async () => (t.server.connections().jsonrpc === 0 ? true : undefined), 10_000);
    const s = await waitFor(async () => {
      const x = await snapshot(t);
      const closed = (x?.alerts?.active as Alert[] | undefined)?.find((a) => a.kind === 'session_error');
      return closed && outboundAlert([...x.alerts.active, ...x.alerts.recent]) ? { x, closed } : undefined;
    });
    expect(s.closed.evidence).toMatchObject({ protocol: 'jsonrpc', close_reason: 'outbound_overflow', class: 'backpressure' });
    const pressure = outboundAlert([...s.x.alerts.active, ...s.x.alerts.recent])!;
    expect(Date.parse(pressure.first_seen)).toBeLessThan(Date.parse(s.closed.first_seen));
    rpc.socket.terminate();
  }, 60_000);
});

describe('the same client under the default bound (1 MiB) and sampling (1 s)', () => {
  let t: TestServer;
  let slow: SlowClient | undefined;
  beforeAll(async () => {
    t = await startTestServer({ PARLEY_STORE_SYNC: 'normal' });
    await storeToken(t.api, 'slow', 'tok-slow');
  });
  afterAll(async () => {
    slow?.close();
    await t.close();
  });

  it('raises the pressure alert before the close, even when messages arrive as fast as the node can send them', async () => {
    slow = await connectSlowClient(t.tcp, 'slow', 'tok-slow');
    slow.stopReading();
    const send = sender(t, 'slow', 32 * 1024);
    for (let i = 0; i < 6000 && t.server.connections().wkproto === 1; i++) await send();
    expect(t.server.connections().wkproto).toBe(0);

    const s = await waitFor(async () => {
      const x = await snapshot(t);
      return (x?.alerts?.active as Alert[] | undefined)?.some((a) => a.kind === 'session_error') ? x : undefined;
    }, 10_000);
    const closeAlert = (s.alerts.active as Alert[]).find((a) => a.kind === 'session_error')!;
    expect(closeAlert.evidence.close_reason).toBe('outbound_overflow');
    const pressure = outboundAlert(s.alerts.active) ?? outboundAlert(s.alerts.recent);
    expect(pressure).toBeDefined();
    // Raised on a sample taken while the session was still open: strictly before the close was counted.
    expect(Date.parse(pressure!.first_seen)).toBeLessThan(Date.parse(closeAlert.first_seen));
  }, 90_000);
});
