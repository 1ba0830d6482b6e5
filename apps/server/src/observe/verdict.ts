import type { TopPressureItem, TopVerdict } from '@parley/shared';
import type { AlertCondition } from './alerts.ts';
import { levelRank, worse, type Level } from './pressure.ts';
import { partDownReason } from './readiness.ts';

/** `sendack_error_rate` at or above this raises the verdict to at least `degraded`. */
export const SENDACK_ERROR_RATE_DEGRADED = 0.05;

/** Alert severity of a pressure level. */
const SEVERITY: Record<string, string> = { critical: 'critical', degraded: 'error', busy: 'warn' };

/** Component of a readiness part's `ready_part_down` alert. */
const PART_COMPONENT: Record<string, string> = { routes: 'cluster', slots: 'cluster', channels: 'channel' };

/** Where to look when a part is down. */
const PART_HINT: Record<string, string> = {
  routes: 'the gateway listeners are not accepting connections (starting or shutting down)',
  slots: 'the store does not answer reads; check the data directory and its disk',
  channels: 'the store cannot take its write lock; another process may hold the database, or the disk is read-only or full',
};

/**
 * The node verdict (http-api.md §5): `critical` when a readiness part is
 * down; else the worst pressure level; then at least `degraded` when the
 * sendack error rate is 5% or more; `ok` otherwise.
 */
export function verdictOf(readyParts: Record<string, boolean>, items: readonly TopPressureItem[], sendackErrorRate: number): TopVerdict {
  const down = Object.entries(readyParts).filter(([, up]) => !up);
  if (down.length > 0) {
    return { level: 'critical', summary: 'cluster runtime is not ready', reasons: down.map(([part]) => partDownReason(part)) };
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
export function alertConditions(
  readyParts: Record<string, boolean>,
  items: readonly TopPressureItem[],
  sendackErrorRate: number,
): AlertCondition[] {
  const out: AlertCondition[] = [];
  for (const [part, up] of Object.entries(readyParts)) {
    if (up) continue;
    const c: AlertCondition = {
      severity: 'critical',
      component: PART_COMPONENT[part] ?? part,
      kind: 'ready_part_down',
      message: partDownReason(part),
      evidence: { ready_part: part, ready: 'false' },
    };
    if (PART_HINT[part]) c.hint = PART_HINT[part];
    out.push(c);
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
    const c: AlertCondition = {
      severity,
      component: it.component,
      kind: 'pressure_high',
      message: `${it.component}/${pool} pressure`,
      evidence,
    };
    if (it.hint) c.hint = it.hint;
    out.push(c);
  }
  return out;
}
