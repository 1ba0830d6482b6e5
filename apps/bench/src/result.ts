/**
 * Scenario results and their validity gates. A scenario whose gate fails is
 * reported as invalid: its figures are shown but must not be read as a pass.
 */
import type { LedgerVerdict } from './ledger.ts';
import type { TargetName } from './drivers/types.ts';

/** One named figure of a scenario; `lower` tells which direction is better (for ratios). */
export interface Figure {
  key: string;
  label: string;
  unit: string;
  value: number | null;
  better: 'lower' | 'higher';
}

/** One validity gate and what it saw. */
export interface Gate {
  name: string;
  ok: boolean;
  detail: string;
}

/** The outcome of one scenario (or phase) against one target. */
export interface ScenarioResult {
  scenario: string;
  title: string;
  target: TargetName;
  figures: Figure[];
  gates: Gate[];
  valid: boolean;
  /** Set when the scenario could not run at all (the error message). */
  error?: string;
  /** Raw counts behind the figures (offered, acked, deliveries, …). */
  counts: Record<string, number>;
}

/** Highest generator CPU share of one core that still counts as a valid run. */
export const MAX_GENERATOR_CPU = 0.7;
/** Lowest achieved/offered ratio that still counts as a valid run. */
export const MIN_ACHIEVED = 0.97;

/** Gate: the generator used at most 70% of its core (else it, not the server, may be the bottleneck). */
export function generatorGate(generatorCpuMs: number, wallMs: number): Gate {
  const share = wallMs > 0 ? generatorCpuMs / wallMs : 0;
  return {
    name: 'generator-cpu',
    ok: share <= MAX_GENERATOR_CPU,
    detail: `${(share * 100).toFixed(0)}% of a core (max ${MAX_GENERATOR_CPU * 100}%)`,
  };
}

/** Gate: at least 97% of the offered rate was achieved. */
export function achievedGate(achieved: number, offered: number, unit: string): Gate {
  const ratio = offered > 0 ? achieved / offered : 0;
  return {
    name: 'achieved',
    ok: ratio >= MIN_ACHIEVED,
    detail: `${achieved.toFixed(0)} of ${offered.toFixed(0)} ${unit} (${(ratio * 100).toFixed(1)}%, min ${MIN_ACHIEVED * 100}%)`,
  };
}

/** Gates: zero loss, zero duplicates, order intact (and nothing unexpected delivered). */
export function ledgerGates(v: LedgerVerdict): Gate[] {
  return [
    { name: 'loss', ok: v.lost === 0, detail: `${v.lost} of ${v.expected} deliveries missing` },
    { name: 'duplicates', ok: v.duplicates === 0 && v.foreign === 0, detail: `${v.duplicates} duplicates, ${v.foreign} unexpected` },
    { name: 'order', ok: v.outOfOrder === 0, detail: `${v.outOfOrder} out of order` },
  ];
}

/** Builds a result; valid when every gate holds and no error occurred. */
export function makeResult(base: Omit<ScenarioResult, 'valid'>): ScenarioResult {
  return { ...base, valid: base.error === undefined && base.gates.every((g) => g.ok) };
}

/** A figure; NaN/undefined values become null. */
export function fig(key: string, label: string, unit: string, value: number | undefined, better: 'lower' | 'higher' = 'lower'): Figure {
  return { key, label, unit, value: value === undefined || !Number.isFinite(value) ? null : value, better };
}
