import { describe, expect, it } from 'vitest';
import { alert, snapshot, view } from '../../test/fixtures.ts';
import { alertFacets, collectAlerts, evidencePairs, filterAlerts, NO_FILTER } from './view-model.ts';

describe('alerts page', () => {
  const a = snapshot('a', {
    active: [alert('p', { severity: 'warn', component: 'runtime', last_seen: '2026-01-01T00:00:08Z' })],
    recent: [
      alert('p', { active: false, severity: 'error', resolved_at: '2026-01-01T00:00:03Z' }),
      alert('r', { active: false, severity: 'critical', component: 'cluster' }),
    ],
  });
  const b = snapshot('b', { active: [alert('p', { severity: 'error', component: 'runtime' })] });
  const rows = collectAlerts([view('a', a), view('b', b)]);

  it('keeps one row per node and fingerprint, the active copy winning', () => {
    expect(rows.map((r) => [r.nodeName, r.id, r.active, r.level])).toEqual([
      ['b', 'p', true, 'error'],
      ['a', 'p', true, 'warning'],
      ['a', 'r', false, 'critical'],
    ]);
    expect(new Set(rows.map((r) => r.key)).size).toBe(3);
  });

  it('filters by node, severity, component and state', () => {
    expect(filterAlerts(rows, { ...NO_FILTER, state: 'recent' }).map((r) => r.id)).toEqual(['r']);
    expect(filterAlerts(rows, { ...NO_FILTER, node: 'a', state: 'active' }).map((r) => r.level)).toEqual(['warning']);
    expect(filterAlerts(rows, { ...NO_FILTER, severity: 'critical' })).toHaveLength(1);
    expect(filterAlerts(rows, { ...NO_FILTER, component: 'runtime' })).toHaveLength(2);
    expect(alertFacets(rows)).toEqual({
      nodes: [
        { id: 'b', name: 'b' },
        { id: 'a', name: 'a' },
      ],
      severities: ['error', 'warning', 'critical'],
      components: ['cluster', 'runtime'],
    });
  });

  it('lists evidence sorted by key', () => {
    expect(evidencePairs({ evidence: { score: '0.9', depth: '90', capacity: '100' } })).toEqual([
      ['capacity', '100'],
      ['depth', '90'],
      ['score', '0.9'],
    ]);
    expect(evidencePairs({})).toEqual([]);
  });
});
