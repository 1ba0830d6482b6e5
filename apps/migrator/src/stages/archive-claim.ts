import { existsSync, openSync, readdirSync, rmSync } from 'node:fs';
import { ExportIdentity } from '@parley/shared';
import { join } from 'node:path';
import { createFile, syncAndClose } from '../archive/durable.ts';
import { openArchive, type Manifest } from '../archive/manifest.ts';
import { createFreshDir, progress, readJsonFile, StageError } from './common.ts';

/** Written into an archive while export builds it, removed once `COMPLETE` is on disk. */
export const EXPORT_PARTIAL_FILE = '.parley-export-partial';

export type { ExportIdentity };

/**
 * Makes `archive` this export's: a new directory with the partial mark; or
 * the directory an interrupted run of the same export (plan, seal, tool) left
 * (discarded, to be written again); or, when that export already finished,
 * the complete archive itself, rechecked (returned: nothing to write).
 * Anything else that exists is refused.
 */
export async function claimArchive(archive: string, id: ExportIdentity): Promise<Manifest | undefined> {
  if (existsSync(archive)) {
    const mark = join(archive, EXPORT_PARTIAL_FILE);
    const prior = existsSync(mark) ? readJsonFile(ExportIdentity, mark) : undefined;
    const same =
      prior !== undefined &&
      prior.plan_sha256 === id.plan_sha256 &&
      prior.seal_sha256 === id.seal_sha256 &&
      prior.tool_commit === id.tool_commit;
    if (existsSync(join(archive, 'COMPLETE')) && (same || prior === undefined)) {
      const manifest = openArchive(archive, id.plan_sha256);
      if (manifest.seal_sha256 !== id.seal_sha256)
        throw new StageError([
          `archive ${archive} is complete but was exported from another prepare (its seal differs); use a new archive directory`,
        ]);
      if (prior) rmSync(mark);
      progress(`export: ${archive} is already complete for this seal; every file rechecked`);
      return manifest;
    }
    if (!same) {
      const empty = readdirSync(archive).length === 0 ? ' (empty)' : '';
      throw new StageError([
        `archive ${archive} already exists${empty} and is not an interrupted export of this plan and seal; every export needs a new archive directory`,
      ]);
    }
    progress(`export: discarding the interrupted export in ${archive}; writing it again`);
    rmSync(archive, { recursive: true, force: true });
  }
  createFreshDir(archive, 'archive');
  await syncAndClose([createFile(join(archive, EXPORT_PARTIAL_FILE), `${JSON.stringify(id)}\n`), openSync(archive, 'r')]);
  return undefined;
}

/** Removes the partial mark once `COMPLETE` is durable. */
export async function releaseArchive(archive: string): Promise<void> {
  rmSync(join(archive, EXPORT_PARTIAL_FILE), { force: true });
  await syncAndClose([openSync(archive, 'r')]);
}
