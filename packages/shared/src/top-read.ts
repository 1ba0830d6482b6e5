import type { TSchema } from '@sinclair/typebox';
import type { TopAlert } from './http/top.schema.ts';

/**
 * Reading rules a client of the top snapshot shares with the server: the
 * server owns every verdict, a reader only ranks and sorts what it was given.
 */

/** Verdict and pressure levels from best to worst (http-api.md §5). */
export const VERDICT_LEVELS = ['ok', 'busy', 'degraded', 'critical'] as const;
export type VerdictLevel = (typeof VERDICT_LEVELS)[number];

/** Pressure score thresholds of the levels: a score at or above a band's value is that level. */
export const PRESSURE_BANDS = { busy: 0.6, degraded: 0.8, critical: 0.95 } as const;

/**
 * Rank of a level, 0 (ok) to 3 (critical). Levels are an open string: one
 * this reader does not know counts as `degraded`, since nothing says it is
 * harmless and it must not hide behind `ok`.
 */
export function verdictRank(level: string): number {
  const i = VERDICT_LEVELS.indexOf(level as VerdictLevel);
  return i < 0 ? 2 : i;
}

/** The worst of several node verdict levels, or undefined when there is none. */
export function worstVerdict(levels: readonly string[]): string | undefined {
  let worst: string | undefined;
  for (const l of levels) if (worst === undefined || verdictRank(l) > verdictRank(worst)) worst = l;
  return worst;
}

/** The level of a pressure score on the 0.6 / 0.8 / 0.95 bands. */
export function pressureBand(score: number): VerdictLevel {
  if (score >= PRESSURE_BANDS.critical) return 'critical';
  if (score >= PRESSURE_BANDS.degraded) return 'degraded';
  if (score >= PRESSURE_BANDS.busy) return 'busy';
  return 'ok';
}

/** Alert severities, least to most severe, as a reader names them. */
export const SEVERITIES = ['warning', 'error', 'critical'] as const;

/** The server writes `warn`; a reader shows `warning`. Other values pass through lower-cased. */
export function normaliseSeverity(severity: string): string {
  const s = severity.trim().toLowerCase();
  return s === 'warn' ? 'warning' : s;
}

/** Rank of a severity, 0 (warning) to 2 (critical); an unknown one ranks as error. */
export function severityRank(severity: string): number {
  const i = SEVERITIES.indexOf(normaliseSeverity(severity) as (typeof SEVERITIES)[number]);
  return i < 0 ? 1 : i;
}

/** Alerts in triage order: active before resolved, then most severe, then most recently seen. */
export function sortAlerts<A extends Pick<TopAlert, 'active' | 'severity' | 'last_seen'>>(alerts: readonly A[]): A[] {
  return [...alerts].sort(
    (a, b) =>
      Number(b.active) - Number(a.active) ||
      severityRank(b.severity) - severityRank(a.severity) ||
      Date.parse(b.last_seen) - Date.parse(a.last_seen),
  );
}

/**
 * A copy of a TypeBox object schema that allows extra properties at every
 * depth. The server answers with its closed schema; a reader built from an
 * older release should not call a newer node's added field a bad response.
 */
export function openSchema<T extends TSchema>(schema: T): T {
  return open(schema) as T;
}

function open(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(open);
  if (value === null || typeof value !== 'object') return value;
  const copy: Record<string | symbol, unknown> = {};
  for (const key of Reflect.ownKeys(value)) {
    if (key === 'additionalProperties') continue;
    copy[key] = open((value as Record<string | symbol, unknown>)[key]);
  }
  return copy;
}
