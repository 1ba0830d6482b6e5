import { STAGE_SUCCESS, type MigrationStage, type Plan, type PlanDetail, type RunRecord } from '@parley/shared';

/** The wizard's steps, in order (console.md §2.6). */
export const STEPS = ['preflight', 'plan', 'diagnose', 'prepare', 'export', 'import', 'verify', 'export-map', 'accept'] as const;
export type StepId = (typeof STEPS)[number];

export const isStage = (s: string): s is MigrationStage => s in STAGE_SUCCESS;

/** What a stage's last run came to. `blocked`: exit 1 with blockers found (or, for diagnose, a scan left incomplete). */
export type StageState = 'todo' | 'running' | 'done' | 'blocked' | 'failed' | 'cancelled';

export function lastRun(runs: readonly RunRecord[], stage: MigrationStage, succeeded = false): RunRecord | undefined {
  return [...runs].reverse().find((r) => r.stage === stage && (!succeeded || r.state === 'succeeded'));
}

export function stageState(runs: readonly RunRecord[], stage: MigrationStage): StageState {
  const r = lastRun(runs, stage);
  if (!r) return 'todo';
  if (r.state === 'running') return 'running';
  if (r.state === 'succeeded') return 'done';
  if (r.state === 'cancelled') return 'cancelled';
  return r.report_status === 'blocked' || r.report_status === 'incomplete' ? 'blocked' : 'failed';
}

/** The stage that must have succeeded before `stage` may run, if any. */
const NEEDS: Partial<Record<MigrationStage, MigrationStage>> = {
  export: 'prepare',
  import: 'export',
  verify: 'import',
  'export-map': 'export',
};

/**
 * Whether `stage` may run now: the stage before it succeeded (the next stage
 * unlocks only on exit 0 with the expected status), export-map only with
 * `compact_sequences`, and nothing while another stage of the plan runs.
 */
export function gate(
  detail: Pick<PlanDetail, 'runs' | 'plan'>,
  stage: MigrationStage,
): { open: true } | { open: false; why: 'needs' | 'running' | 'not_compact'; stage?: MigrationStage } {
  const running = detail.runs.find((r) => r.state === 'running');
  if (running) return { open: false, why: 'running', stage: running.stage };
  if (stage === 'export-map' && !(detail.plan as Plan).messages?.compact_sequences) return { open: false, why: 'not_compact' };
  const need = NEEDS[stage];
  if (need && !lastRun(detail.runs, need, true)) return { open: false, why: 'needs', stage: need };
  return { open: true };
}

/** The report a stage's viewer shows: its last successful run's, else its last run's. */
export function currentReport(runs: readonly RunRecord[], stage: MigrationStage): RunRecord | undefined {
  const ok = lastRun(runs, stage, true);
  if (ok?.report_file) return ok;
  return [...runs].reverse().find((r) => r.stage === stage && r.report_file);
}
