import type { TopPressureItem, TopVerdict } from '@parley/shared';
import type { AlertCondition } from './alerts.ts';
import { levelRank, worse, type Level } from './pressure.ts';

/** `sendack_error_rate` at or above this raises the verdict to at least `degraded`. */
export const SENDACK_ERROR_RATE_DEGRADED = 0.05;

/** Alert severity of a pressure level. */
const SEVERITY: Record<string, string> = { critical: 'critical', degraded: 'error', busy: 'warn' };

/**
 * The node verdict (http-api.md §5): `critical` when a readiness part is
 * down; else the worst pressure level; then at least `degraded` when the
 * sendack error rate is 5% or more; `ok` otherwise.
 */
export function verdictOf(readyParts: Record<string, boolean>, items: readonly TopPressureItem[], sendackErrorRate: number): TopVerdict {
  const down = Object.entries(readyParts).filter(([, up]) => !up);
  if (down.length > 0) {
    return { level: 'critical', summary: 'cluster runtime is not ready', reasons: down.map(([part]) => `${part} not ready`) };
  }
  let level: Level = 'ok';
  let summary = 'runtime healthy';
  const reasons: string[] = [];
  for (const it of items) {
    if (levelRank(it.level) === 0) continue;
    level = worse(level, it.level as Level);
    reasons.push(`${it.component}/${it.pool ?? it.queue ?? 'default'} pressure`);
  }
  if (level !== 'ok') summary = 'runtime pressure detected';
  if (sendackErrorRate >= SENDACK_ERROR_RATE_DEGRADED) {
    level = worse(level, 'degraded');
    summary = 'sendack error rate is high';
    reasons.push('sendack error rate >= 5%');
  }
  return reasons.length > 0 ? { level, summary, reasons } : { level, summary };
}

/** The alert conditions that hold on one tick. */
export function alertConditions(readyParts: Record<string, boolean>, items: readonly TopPressureItem[], sendackErrorRate: number): AlertCondition[] {
  const out: AlertCondition[] = [];
  for (const [part, up] of Object.entries(readyParts)) {
    if (up) continue;
    out.push({ severity: 'critical', component: part === 'gateway' ? 'channel' : 'cluster', kind: 'ready_part_down', message: `${part} not ready`, evidence: { part } });
  }
  if (sendackErrorRate >= SENDACK_ERROR_RATE_DEGRADED) {
    out.push({
      severity: 'error',
      component: 'message',
      kind: 'sendack_error_rate_high',
      message: 'sendack error rate is high',
      evidence: { 'threshold.degraded': String(SENDACK_ERROR_RATE_DEGRADED), rate: sendackErrorRate.toFixed(4) },
    });
  }
  for (const it of items) {
    const severity = SEVERITY[it.level];
    if (!severity) continue;
    const pool = it.pool ?? it.queue ?? 'default';
    const evidence: Record<string, string> = { level: it.level, score: String(it.score) };
    if (it.depth !== undefined) evidence.depth = String(it.depth);
    if (it.capacity !== undefined) evidence.capacity = String(it.capacity);
    const c: AlertCondition = { severity, component: it.component, kind: 'pressure_high', message: `${it.component}/${pool} pressure`, evidence };
    if (it.hint) c.hint = it.hint;
    out.push(c);
  }
  return out;
}
