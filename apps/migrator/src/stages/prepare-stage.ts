import { writeFileSync } from 'node:fs';
import type { ArchiveSeal } from '@parley/shared';
import { join } from 'node:path';
import type { Finding, PatchOp } from '../prepare/findings.ts';
import type { AuthorityReport } from '../prepare/merge.ts';
import type { PluginReport } from '../prepare/plugins.ts';
import { attachResolutions } from '../prepare/resolutions.ts';
import { canonicalJson, loadPlan, sha256, toolIdentity, writeJsonFile, type ReportBase } from './common.ts';
import { collectRecords, openPrepareWorkspace, type SourceSummary } from './prepare.ts';
import type { FileDigests } from './records-dir.ts';
import type { StageContext } from '../run-stage.ts';
import { readLockTable } from '../source/lock.ts';
import { sequenceMappingReport, type SequenceMappingReport } from './mapping-report.ts';

export interface PrepareReport extends ReportBase {
  stage: 'prepare';
  plan_sha256?: string;
  selection_digest?: string;
  sources?: SourceSummary[];
  in?: Record<string, number>;
  out?: FileDigests;
  retained_messages?: number;
  blockers: Finding[];
  warnings: Finding[];
  warning_totals?: Record<string, number>;
  /** Live memberships without a v2 conversation, hidden until a new message (seed: `hidden_memberships`). */
  hidden_memberships?: number;
  /** Stored unread counts `derive_unread_from_boundaries` leaves in the archive (seed: `archived_unread`). */
  archived_unread?: number;
  /** Rows left out of the target and kept complete in the archive's excluded records, per reason. */
  excluded?: Record<string, number>;
  /** With `compact_sequences`: the mapping files and their digests (seed: `sequence_mapping`). */
  sequence_mapping?: SequenceMappingReport;
  /** Parley runs no v2 plugins: what the sources hold and the plan maps, archived and reported. */
  plugins?: PluginReport;
  /** Several source nodes: the replica choice (topology, slots, channels, rows that differ). */
  authority?: AuthorityReport;
  /** Every blocker's resolution patch, in order: applied to the plan, it resolves them all. */
  resolution_patch?: PatchOp[];
}

export type { ArchiveSeal };

/**
 * `migrate prepare`: checks the plan and the stopped sources, decodes every
 * shard into business records, applies the strict checks and, when nothing
 * blocks, writes `archive_seal.json`. Status `prepared` or `blocked`.
 */
export async function runPrepare(planFile: string, workspace: string, report: PrepareReport, ctx: StageContext): Promise<void> {
  const locks = readLockTable();
  const loaded = loadPlan(planFile, { workspace }, 'prepare');
  report.plan_sha256 = loaded.sha256;
  openPrepareWorkspace(workspace, loaded);
  ctx.ownsWorkspace = true;
  const outcome = await collectRecords(loaded, join(workspace, 'records'), locks);
  writeJsonFile(join(workspace, 'source-fingerprint.json'), outcome.fingerprints, true);
  Object.assign(report, {
    selection_digest: outcome.selection_digest,
    sources: outcome.sources,
    in: outcome.counts,
    out: outcome.files,
    retained_messages: outcome.retained_messages,
    blockers: outcome.blockers,
    warnings: outcome.warnings,
    warning_totals: outcome.warning_totals,
    hidden_memberships: outcome.hidden_memberships,
    archived_unread: outcome.archived_unread,
    excluded: outcome.excluded,
    plugins: outcome.plugins,
    ...(outcome.authority ? { authority: outcome.authority } : {}),
    ...(loaded.plan.messages?.compact_sequences ? { sequence_mapping: sequenceMappingReport(outcome.files) } : {}),
  });
  report.resolution_patch = attachResolutions(loaded.plan, outcome.blockers, outcome.warnings);
  if (outcome.blockers.length > 0) {
    report.status = 'blocked';
    report.errors.push(
      `${outcome.blockers.length} blockers: the strict default path cannot carry this data over exactly; nothing may be exported`,
    );
    return;
  }
  report.status = 'prepared';
  const reportText = canonicalJson({ ...report, duration_ms: 0 });
  writeFileSync(join(workspace, 'prepare-report.json'), `${reportText}\n`, { mode: 0o600 });
  const seal: ArchiveSeal = {
    plan_sha256: loaded.sha256,
    tool: toolIdentity(),
    selection_digest: outcome.selection_digest,
    report_sha256: sha256(reportText),
    files: outcome.files,
    sources: outcome.sources.map((s) => ({ node_id: s.node_id, data_dir: s.data_dir, fingerprint_sha256: s.fingerprint_sha256 })),
    plugin_artifacts: outcome.plugins.artifacts,
  };
  writeJsonFile(join(workspace, 'archive_seal.json'), seal);
}
