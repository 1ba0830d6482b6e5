import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { WorkspaceIdentity } from '@parley/shared';
import { createFreshDir, progress, readJsonFile, StageError, toolIdentity, writeJsonFile, type LoadedPlan } from './common.ts';

export type { WorkspaceIdentity };

const IDENTITY_FILE = 'identity.json';

/**
 * Creates a stage's workspace, or reuses one an interrupted run of the same
 * stage, plan, archive and tool left behind (no report was written: the
 * process was killed). A workspace another stage, plan or tool made, or one
 * a finished run reported into, is refused. Returns whether it was reused.
 */
export function openStageWorkspace(workspace: string, stage: string, loaded: LoadedPlan, archive?: string): boolean {
  const identity: WorkspaceIdentity = {
    stage,
    plan_sha256: loaded.sha256,
    tool: toolIdentity(),
    ...(archive !== undefined ? { archive } : {}),
  };
  const idFile = join(workspace, IDENTITY_FILE);
  if (existsSync(workspace)) {
    const prior = existsSync(idFile) ? readJsonFile(WorkspaceIdentity, idFile) : undefined;
    const same =
      prior !== undefined &&
      prior.stage === stage &&
      prior.plan_sha256 === identity.plan_sha256 &&
      prior.tool.commit === identity.tool.commit &&
      prior.archive === identity.archive;
    if (!same || existsSync(join(workspace, 'report.json')) || existsSync(join(workspace, 'archive_seal.json'))) {
      const whose = prior && prior.stage !== stage ? ` (it is a ${prior.stage} workspace)` : '';
      throw new StageError([`workspace ${workspace} already exists${whose}; every stage needs a new one`]);
    }
    progress(
      `${stage}: reusing the workspace of an interrupted ${stage} (${readdirSync(workspace).length} entries); rechecking from the start`,
    );
    return true;
  }
  createFreshDir(workspace, 'workspace');
  writeJsonFile(idFile, identity);
  return false;
}
