import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Finding, PatchOp } from '../prepare/findings.ts';
import type { AuthorityReport } from '../prepare/merge.ts';
import { attachResolutions } from '../prepare/resolutions.ts';
import type { StageContext } from '../run-stage.ts';
import { readLockTable } from '../source/lock.ts';
import { loadPlan, type ReportBase } from './common.ts';
import { collectRecords, type SourceSummary } from './prepare.ts';
import { openStageWorkspace } from './workspace.ts';

export interface DiagnoseReport extends ReportBase {
  stage: 'diagnose';
  plan_sha256?: string;
  /** False when a shard could not be read: the inventory is then incomplete (exit 1). */
  complete_scan?: boolean;
  unreadable?: string[];
  /** The selection prepare would seal with this plan, were nothing blocking. */
  selection_digest?: string;
  sources?: SourceSummary[];
  in?: Record<string, number>;
  retained_messages?: number;
  blockers: Finding[];
  warnings: Finding[];
  warning_totals?: Record<string, number>;
  hidden_memberships?: number;
  archived_unread?: number;
  excluded?: Record<string, number>;
  authority?: AuthorityReport;
  resolution_patch?: PatchOp[];
}

/**
 * `migrate diagnose`: the inventory of everything that blocks this plan, in
 * a workspace of its own (prepare refuses it): the sources are read as
 * prepare reads them, but past shards that cannot be read, and nothing is
 * sealed. Status `diagnosed` (exit 0) when nothing blocks and every shard was
 * read; `blocked` or `incomplete` (exit 1) otherwise.
 */
export async function runDiagnose(planFile: string, workspace: string, report: DiagnoseReport, ctx: StageContext): Promise<void> {
  const locks = readLockTable();
  const loaded = loadPlan(planFile, { workspace }, 'prepare');
  report.plan_sha256 = loaded.sha256;
  if (openStageWorkspace(workspace, 'diagnose', loaded)) {
    for (const d of ['records', 'nodes']) rmSync(join(workspace, d), { recursive: true, force: true });
  }
  ctx.ownsWorkspace = true;
  const outcome = await collectRecords(loaded, join(workspace, 'records'), locks, 'diagnose');
  Object.assign(report, {
    complete_scan: outcome.unreadable.length === 0,
    unreadable: outcome.unreadable,
    selection_digest: outcome.selection_digest,
    sources: outcome.sources,
    in: outcome.counts,
    retained_messages: outcome.retained_messages,
    blockers: outcome.blockers,
    warnings: outcome.warnings,
    warning_totals: outcome.warning_totals,
    hidden_memberships: outcome.hidden_memberships,
    archived_unread: outcome.archived_unread,
    excluded: outcome.excluded,
    ...(outcome.authority ? { authority: outcome.authority } : {}),
  });
  report.resolution_patch = attachResolutions(loaded.plan, outcome.blockers, outcome.warnings);
  if (outcome.unreadable.length > 0) {
    report.status = 'incomplete';
    report.errors.push(`${outcome.unreadable.length} shards could not be read: the inventory is incomplete`);
  } else if (outcome.blockers.length > 0) {
    report.status = 'blocked';
    report.errors.push(`${outcome.blockers.length} blockers; each names its resolution, resolution_patch resolves them all`);
  } else {
    report.status = 'diagnosed';
  }
}
