import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import { TopSnapshot } from './http/top.schema.ts';
import { normaliseSeverity, openSchema, pressureBand, sortAlerts, worstVerdict } from './top-read.ts';

describe('top snapshot reading rules', () => {
  it('takes the worst verdict, counting an unknown level as degraded', () => {
    expect(worstVerdict([])).toBeUndefined();
    expect(worstVerdict(['ok', 'busy', 'ok'])).toBe('busy');
    expect(worstVerdict(['degraded', 'critical', 'busy'])).toBe('critical');
    expect(worstVerdict(['ok', 'overloaded'])).toBe('overloaded');
    expect(worstVerdict(['overloaded', 'critical'])).toBe('critical');
  });

  it('puts scores on the 0.6 / 0.8 / 0.95 bands, bounds included', () => {
    expect([0, 0.59, 0.6, 0.79, 0.8, 0.949, 0.95, 1].map(pressureBand)).toEqual([
      'ok',
      'ok',
      'busy',
      'busy',
      'degraded',
      'degraded',
      'critical',
      'critical',
    ]);
  });

  it('normalises warn to warning', () => {
    expect(normaliseSeverity('warn')).toBe('warning');
    expect(normaliseSeverity('Critical')).toBe('critical');
  });

  it('sorts alerts: active first, then severity, then last seen', () => {
    const a = (id: string, active: boolean, severity: string, last: string) => ({
      id,
      active,
      severity,
      last_seen: `2026-01-01T00:00:${last}Z`,
    });
    const sorted = sortAlerts([
      a('old-warn', true, 'warn', '01'),
      a('resolved-crit', false, 'critical', '09'),
      a('err', true, 'error', '02'),
      a('new-warn', true, 'warn', '05'),
    ]);
    expect(sorted.map((x) => x.id)).toEqual(['err', 'new-warn', 'old-warn', 'resolved-crit']);
  });

  it('opens a closed schema at every depth without touching the original', () => {
    const snap = {
      version: 'top/v1',
      scope: 'local_node',
      generated_at: 'x',
      window_seconds: 1,
      extra: 1,
      node: { id: 1, name: 'n', ready: true, ready_parts: {}, added: true },
      verdict: { level: 'ok', summary: 's' },
      resources: { cpu_percent: 0, memory_rss_bytes: 0, memory_vms_bytes: 0, goroutines: 0, threads: 0 },
      alerts: { counts: { active: 0, recent: 0, warning: 0, error: 0, critical: 0 } },
      sources: { collector: { available: true }, cluster_snapshot: { available: false }, metrics: { enabled: true, required: false } },
    };
    expect(Value.Check(TopSnapshot, snap)).toBe(false);
    expect(Value.Check(openSchema(TopSnapshot), snap)).toBe(true);
    expect(Value.Check(openSchema(TopSnapshot), { ...snap, window_seconds: 'x' })).toBe(false);
  });
});
