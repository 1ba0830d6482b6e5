import { join } from 'node:path';
import { JsonlWriter } from '../archive/jsonl.ts';
import { archiveRecords, openArchive } from '../archive/manifest.ts';
import { buildMapping } from '../prepare/mapping.ts';
import type { StageContext } from '../run-stage.ts';
import { loadPlan, progress, StageError, type ReportBase } from './common.ts';
import type { SequenceMappingReport } from './mapping-report.ts';
import { openStageWorkspace } from './workspace.ts';

export interface ExportMapReport extends ReportBase {
  stage: 'export-map';
  plan_sha256?: string;
  selection_digest?: string;
  /** The rebuilt files, in the workspace, with their digests. */
  sequence_mapping?: SequenceMappingReport;
  /** Whether both files are byte for byte the ones the archive holds. */
  matches_archive?: boolean;
}

/**
 * `migrate export-map`: rebuilds the sequence mapping and the duplicate
 * chain proof from a complete archive's retained and excluded messages alone
 * (for clients that apply the mapping, or to audit it) into the workspace,
 * and checks them against the files prepare sealed into the archive. Status
 * `mapped`; a plan without `compact_sequences` has no mapping to rebuild.
 */
export async function runExportMap(
  planFile: string,
  workspace: string,
  archive: string,
  report: ExportMapReport,
  ctx: StageContext,
): Promise<void> {
  const loaded = loadPlan(planFile, { workspace, archive }, 'export-map');
  report.plan_sha256 = loaded.sha256;
  if (loaded.plan.messages?.compact_sequences !== true) {
    throw new StageError([
      'plan.messages.compact_sequences is not set: the plan renumbers nothing, so there is no sequence mapping to rebuild',
    ]);
  }
  openStageWorkspace(workspace, 'export-map', loaded, archive);
  ctx.ownsWorkspace = true;
  const manifest = openArchive(archive, loaded.sha256);
  report.selection_digest = manifest.selection_digest;
  const t0 = Date.now();
  const { mapping, proof } = buildMapping(archiveRecords(archive));
  const files = { mapping: join(workspace, 'sequence_mapping.jsonl'), proof: join(workspace, 'duplicate_chain_proof.jsonl') };
  const mw = new JsonlWriter(files.mapping);
  for (const m of mapping) mw.write(m);
  const pw = new JsonlWriter(files.proof);
  for (const p of proof) pw.write(p);
  const [md, pd] = await Promise.all([mw.close(), pw.close()]);
  report.sequence_mapping = { mapping: { file: files.mapping, ...md }, duplicate_chain_proof: { file: files.proof, ...pd } };
  progress(
    `export-map: ${md.count} mapping lines and ${pd.count} chain proof lines rebuilt from the archive in ${Date.now() - t0} ms (${Math.round((md.count * 1000) / Math.max(1, Date.now() - t0))}/s)`,
  );
  const problems: string[] = [];
  if (md.sha256 !== manifest.files.sequence_mapping.sha256 || md.count !== manifest.files.sequence_mapping.count)
    problems.push("the rebuilt sequence_mapping.jsonl differs from the archive's records/sequence_mapping.jsonl");
  if (pd.sha256 !== manifest.files.duplicate_chain_proof.sha256 || pd.count !== manifest.files.duplicate_chain_proof.count)
    problems.push("the rebuilt duplicate_chain_proof.jsonl differs from the archive's records/duplicate_chain_proof.jsonl");
  report.matches_archive = problems.length === 0;
  if (problems.length > 0) throw new StageError(problems);
  report.status = 'mapped';
}
