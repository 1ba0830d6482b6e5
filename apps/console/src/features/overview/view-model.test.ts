import { describe, expect, it } from 'vitest';
import { alert, item, snapshot, view } from '../../test/fixtures.ts';
import { activeAlerts, hotPressure, isReady, nodeRow, reachability, rollup } from './view-model.ts';

const unreachable = { kind: 'unreachable' as const, stale: true, ageMs: 4000, detail: 'the node cannot be reached' };

describe('verdict roll-up', () => {
  it('takes the worst verdict of the nodes with current data, with that node’s summary and every non-ok reason', () => {
    const r = rollup([
      view('a', snapshot('a')),
      view('b', snapshot('b', { level: 'degraded', summary: 'runtime pressure detected', reasons: ['storage/append pressure'] })),
      view('c', snapshot('c', { level: 'busy', summary: 'runtime pressure detected', reasons: ['runtime/event_loop pressure'] })),
    ]);
    expect(r.level).toBe('degraded');
    expect(r.summary).toBe('runtime pressure detected');
    expect(r.reasons).toEqual([
      { node: 'b', text: 'storage/append pressure' },
      { node: 'c', text: 'runtime/event_loop pressure' },
    ]);
    expect(r).toMatchObject({ ready: 3, total: 3, unreachable: [] });
  });

  it('never scores a node it cannot see: stale data is left out of the verdict and counted not ready', () => {
    const dead = view('b', snapshot('b', { level: 'critical' }), unreachable);
    const r = rollup([view('a', snapshot('a', { level: 'busy' })), dead]);
    expect(r.level).toBe('busy');
    expect(r.ready).toBe(1);
    expect(r.unreachable.map((v) => v.node.id)).toEqual(['b']);
    const old = view('c', snapshot('c'), { kind: 'ok', stale: true, ageMs: 9000 });
    expect(rollup([old]).level).toBe('unknown');
    expect(rollup([old]).unreachable).toHaveLength(1);
  });

  it('is unknown with no data, and counts a not-ready node', () => {
    expect(rollup([]).level).toBe('unknown');
    expect(rollup([view('a', undefined, { kind: 'loading', stale: false })])).toMatchObject({ level: 'unknown', ready: 0, total: 1 });
    const notReady = view(
      'a',
      snapshot('a', { ready: false, level: 'critical', summary: 'cluster runtime is not ready', reasons: ['routes not ready'] }),
    );
    expect(rollup([notReady])).toMatchObject({ level: 'critical', ready: 0, reasons: [{ node: 'a', text: 'routes not ready' }] });
    expect(reachability(notReady)).toBe('not_ready');
  });

  it('falls back to /readyz when top is disabled or warming up', () => {
    const v = {
      ...view('a', undefined, { kind: 'disabled' as const, stale: false }),
      ready: { ready: true },
      readyStatus: { kind: 'ok' as const, stale: false },
    };
    expect(isReady(v)).toBe(true);
    expect(reachability(v)).toBe('ready');
    expect(reachability({ ...v, readyStatus: { kind: 'unreachable', stale: false } })).toBe('disabled');
    expect(isReady({ ...v, ready: { ready: false, reason: 'store unavailable' } })).toBe(false);
  });
});

describe('node rows', () => {
  it('carries the wkcli columns and the top pressure item', () => {
    const r = nodeRow(
      view('a', snapshot('a', { send: 42, items: [item('storage', 'append', 0.2, 'ok'), item('runtime', 'event_loop', 0.7, 'busy')] })),
    );
    expect(r).toMatchObject({
      name: 'a',
      reach: 'ready',
      stale: false,
      verdict: 'ok',
      connections: 3,
      sendPerSec: 42,
      appendP99Ms: 4,
      errorRate: 0,
      topPressure: { label: 'runtime/event_loop', score: 0.7, level: 'busy' },
    });
  });

  it('marks the last data of an unreachable node stale, with its age', () => {
    const r = nodeRow(view('a', snapshot('a'), unreachable));
    expect(r).toMatchObject({ reach: 'unreachable', stale: true, ageMs: 4000, verdict: 'ok' });
  });
});

describe('hot pressure and active alerts', () => {
  it('lists the five highest scores across nodes, with their band', () => {
    const a = snapshot('a', { items: [item('x', 'p1', 0.1, 'ok'), item('x', 'p2', 0.96, 'critical'), item('x', 'p3', 0.61, 'busy')] });
    const b = snapshot('b', { items: [item('y', 'q1', 0.85, 'degraded'), item('y', 'q2', 0.3, 'ok'), item('y', 'q3', 0.05, 'ok')] });
    const hot = hotPressure([view('a', a), view('b', b)]);
    expect(hot.map((h) => [h.nodeName, h.item.pool, h.band])).toEqual([
      ['a', 'p2', 'critical'],
      ['b', 'q1', 'degraded'],
      ['a', 'p3', 'busy'],
      ['b', 'q2', 'ok'],
      ['a', 'p1', 'ok'],
    ]);
  });

  it('orders active alerts by severity then last seen, across nodes', () => {
    const a = snapshot('a', {
      active: [alert('w-old', { severity: 'warn', last_seen: '2026-01-01T00:00:01Z' }), alert('crit', { severity: 'critical' })],
    });
    const b = snapshot('b', {
      active: [alert('w-new', { severity: 'warn', last_seen: '2026-01-01T00:00:09Z' }), alert('err', { severity: 'error' })],
    });
    expect(activeAlerts([view('a', a), view('b', b)]).map((x) => `${x.nodeName}:${x.id}`)).toEqual([
      'a:crit',
      'b:err',
      'b:w-new',
      'a:w-old',
    ]);
    expect(activeAlerts([view('a', a), view('b', b)], 2)).toHaveLength(2);
  });
});
