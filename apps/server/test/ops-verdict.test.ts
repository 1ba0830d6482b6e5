import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.ts';
import { call, waitFor } from './ops-helpers.ts';

describe('top verdict, pressure and alerts from a filled queue', () => {
  let t: TestServer;
  let depth = 0;
  let unregister: () => void;
  const snap = async () => (await call(`${t.api}/top/v1/snapshot?view=runtime&window=2s`)).json;
  /** Waits for a snapshot whose verdict has `level` (the collector ticks every 100 ms). */
  const untilLevel = (level: string) =>
    waitFor(async () => {
      const s = await snap();
      return s?.verdict?.level === level ? s : undefined;
    });

  beforeAll(async () => {
    t = await startTestServer({ PARLEY_TOP_COLLECT_INTERVAL: '100ms' });
    unregister = t.server.ops.collector!.registerQueue('test-fill', () => ({
      component: 'test',
      pool: 'fill',
      queue: 'fill_queue',
      depth,
      capacity: 100,
    }));
  });
  afterAll(async () => {
    unregister();
    await t.close();
  });

  it('is ok with an empty queue', async () => {
    const s = await untilLevel('ok');
    expect(s.verdict).toEqual({ level: 'ok', summary: 'runtime healthy' });
    expect(s.pressure.overall_level).toBe('ok');
  });

  it('turns busy at 60% and degraded at 80% of capacity, with a pressure alert', async () => {
    depth = 70;
    const busy = await untilLevel('busy');
    expect(busy.verdict.summary).toBe('runtime pressure detected');
    // Other pressure (the event loop of a loaded CI machine) may add reasons; ours must be there.
    expect(busy.verdict.reasons).toContain('test/fill pressure');
    const item = busy.pressure.top.find((i: { component: string }) => i.component === 'test');
    expect(item).toMatchObject({
      pool: 'fill',
      queue: 'fill_queue',
      level: 'busy',
      score: 0.7,
      depth: 70,
      capacity: 100,
      hint: 'queue depth is approaching capacity',
    });
    expect(busy.pressure.component_scores.test).toBe(0.7);
    const alert = busy.alerts.active.find((a: { kind: string; component: string }) => a.kind === 'pressure_high' && a.component === 'test');
    expect(alert).toMatchObject({
      fingerprint: 'test|pressure_high|test/fill pressure',
      severity: 'warn',
      component: 'test',
      active: true,
    });

    depth = 85;
    const degraded = await untilLevel('degraded');
    expect(degraded.pressure.overall_level).toBe('degraded');
    const again = degraded.alerts.active.find(
      (a: { kind: string; component: string }) => a.kind === 'pressure_high' && a.component === 'test',
    );
    expect(again.id).toBe(alert.id);
    expect(again.severity).toBe('error');
    expect(again.count).toBeGreaterThan(alert.count);
    expect(again.first_seen).toBe(alert.first_seen);
    expect(degraded.alerts.counts.error).toBeGreaterThanOrEqual(1);

    depth = 96;
    const critical = await untilLevel('critical');
    expect(critical.alerts.counts.critical).toBeGreaterThanOrEqual(1);
  });

  it('returns to ok when the queue drains, keeping the resolved alert in recent', async () => {
    depth = 0;
    const ok = await untilLevel('ok');
    expect(ok.alerts.active ?? []).toEqual([]);
    const resolved = ok.alerts.recent.find((a: { fingerprint: string }) => a.fingerprint === 'test|pressure_high|test/fill pressure');
    expect(resolved.active).toBe(false);
    expect(Date.parse(resolved.resolved_at)).toBeGreaterThanOrEqual(Date.parse(resolved.last_seen));
    expect(ok.alerts.counts.recent).toBeGreaterThanOrEqual(1);
  });

  it('scores a queue with depth and no capacity as full', async () => {
    const off = t.server.ops.collector!.registerQueue('test-nocap', () => ({
      component: 'test',
      pool: 'nocap',
      queue: 'q',
      depth: 3,
      capacity: 0,
    }));
    try {
      const s = await untilLevel('critical');
      const item = s.pressure.top.find((i: { pool: string }) => i.pool === 'nocap');
      expect(item).toMatchObject({ score: 1, level: 'critical', hint: 'queue has depth but no capacity' });
    } finally {
      off();
    }
    await untilLevel('ok');
  });
});
