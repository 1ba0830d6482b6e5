/**
 * The run's output: a fixed-width table on stdout (every figure of every
 * scenario for each target, with Parley/mosquitto ratios and validity) and one
 * JSON document with the same figures plus the run's context.
 */
import type { ScenarioResult } from './result.ts';
import type { TargetName } from './drivers/types.ts';

/** Figures of one scenario across targets, with ratios Parley ÷ mosquitto per figure. */
export interface ScenarioReport {
  scenario: string;
  title: string;
  results: Partial<Record<TargetName, ScenarioResult>>;
  /** target → figure key → value(target) / value(mosquitto); null when either is missing or zero. */
  ratios: Partial<Record<TargetName, Record<string, number | null>>>;
}

/** Groups results by scenario (in first-seen order) and computes the ratios against mosquitto. */
export function buildReports(results: readonly ScenarioResult[]): ScenarioReport[] {
  const byScenario = new Map<string, ScenarioReport>();
  for (const r of results) {
    let rep = byScenario.get(r.scenario);
    if (!rep) byScenario.set(r.scenario, (rep = { scenario: r.scenario, title: r.title, results: {}, ratios: {} }));
    rep.results[r.target] = r;
  }
  for (const rep of byScenario.values()) {
    const peer = rep.results.mosquitto;
    for (const [target, r] of Object.entries(rep.results) as Array<[TargetName, ScenarioResult]>) {
      if (target === 'mosquitto' || !peer) continue;
      const ratios: Record<string, number | null> = {};
      for (const f of r.figures) {
        const p = peer.figures.find((g) => g.key === f.key)?.value;
        ratios[f.key] = f.value !== null && p !== null && p !== undefined && p !== 0 ? f.value / p : null;
      }
      rep.ratios[target] = ratios;
    }
  }
  return [...byScenario.values()];
}

const fmt = (v: number | null | undefined): string => {
  if (v === null || v === undefined) return '—';
  const a = Math.abs(v);
  return a >= 1000 ? v.toFixed(0) : a >= 100 ? v.toFixed(1) : a >= 1 ? v.toFixed(2) : v.toFixed(3);
};

/** The table: one block per scenario, a row per figure, then the validity row (failed gates named). */
export function renderTable(reports: readonly ScenarioReport[], targets: readonly TargetName[]): string {
  const parleys = targets.filter((t) => t !== 'mosquitto');
  const head = ['figure', ...targets, ...parleys.map((t) => `${t.replace('parley-', '')}÷mosq`)];
  const rows: string[][] = [];
  for (const rep of reports) {
    rows.push([`[${rep.scenario}] ${rep.title}`]);
    const keys = new Map<string, string>();
    for (const r of Object.values(rep.results)) for (const f of r!.figures) keys.set(f.key, `  ${f.label} (${f.unit})`);
    for (const [key, label] of keys) {
      rows.push([
        label,
        ...targets.map((t) => fmt(rep.results[t]?.figures.find((f) => f.key === key)?.value)),
        ...parleys.map((t) => {
          const q = rep.ratios[t]?.[key];
          return q === null || q === undefined ? '—' : `${fmt(q)}×`;
        }),
      ]);
    }
    rows.push([
      '  valid',
      ...targets.map((t) => {
        const r = rep.results[t];
        if (!r) return '—';
        if (r.error) return 'ERROR';
        return r.valid
          ? 'yes'
          : `NO: ${r.gates
              .filter((g) => !g.ok)
              .map((g) => g.name)
              .join(',')}`;
      }),
    ]);
  }
  const widths = head.map((h, i) => Math.max(h.length, ...rows.filter((r) => r.length > 1).map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map((r) => (r.length === 1 ? r[0]! : line(r)))].join('\n');
}

/** Details of every failed gate and error, one line each (for stderr and the README's "reading a run"). */
export function renderProblems(reports: readonly ScenarioReport[]): string[] {
  const out: string[] = [];
  for (const rep of reports) {
    for (const r of Object.values(rep.results)) {
      if (r!.error) out.push(`${rep.scenario} ${r!.target}: error: ${r!.error}`);
      for (const g of r!.gates) if (!g.ok) out.push(`${rep.scenario} ${r!.target}: gate ${g.name} failed: ${g.detail}`);
    }
  }
  return out;
}
