import { existsSync, readFileSync } from 'node:fs';
import { ARCHIVE_FORMAT, ARCHIVE_FORMAT_VERSION, ArchiveManifest, ArchiveSeal } from '@parley/shared';
import { join } from 'node:path';
import { RECORD_FILES } from '../v2/records.ts';
import { checkedJson, parseJson, readJsonFile, sha256, StageError } from '../stages/common.ts';
import { recordPath, selectionDigest } from '../stages/records-dir.ts';
import { digestFile } from './file-digest.ts';

export { ARCHIVE_FORMAT, ARCHIVE_FORMAT_VERSION };
/** `manifest.json` of an archive. */
export type Manifest = ArchiveManifest;

/** The records directory of an archive. */
export function archiveRecords(archive: string): string {
  return join(archive, 'records');
}

/**
 * Opens an archive for import or verify: `COMPLETE` must name the manifest's
 * digest, the manifest must belong to this plan, and every record file must
 * match its digest and count. Any difference names the file and fails.
 */
export function openArchive(archive: string, planSha256: string): Manifest {
  const problems: string[] = [];
  const complete = join(archive, 'COMPLETE');
  const manifestFile = join(archive, 'manifest.json');
  if (!existsSync(archive)) throw new StageError([`archive ${archive} does not exist`]);
  if (!existsSync(manifestFile)) throw new StageError([`archive ${archive}: manifest.json is missing`]);
  if (!existsSync(complete)) throw new StageError([`archive ${archive}: COMPLETE is missing (export did not finish)`]);
  const manifestText = readFileSync(manifestFile);
  if (readFileSync(complete, 'utf8').trim() !== sha256(manifestText))
    problems.push(`archive file manifest.json: its SHA-256 differs from COMPLETE`);
  const format = parseJson(manifestFile, manifestText.toString('utf8')) as { format?: unknown; format_version?: unknown } | null;
  if (format?.format !== ARCHIVE_FORMAT || format.format_version !== ARCHIVE_FORMAT_VERSION) {
    throw new StageError([
      `archive ${archive}: format ${String(format?.format)}/${String(format?.format_version)} is not ${ARCHIVE_FORMAT}/${ARCHIVE_FORMAT_VERSION}`,
    ]);
  }
  const manifest = checkedJson(ArchiveManifest, manifestFile, format);
  if (manifest.plan_sha256 !== planSha256) problems.push(`archive ${archive} was exported for another plan (plan SHA-256 differs)`);
  for (const name of RECORD_FILES) {
    const file = recordPath(archiveRecords(archive), name);
    const rel = `records/${name}.jsonl`;
    const want = manifest.files[name];
    if (!want) {
      problems.push(`archive file ${rel}: not in the manifest`);
      continue;
    }
    if (!existsSync(file)) {
      problems.push(`archive file ${rel}: missing`);
      continue;
    }
    const got = digestFile(file);
    if (got.sha256 !== want.sha256 || got.count !== want.count || got.bytes !== want.bytes) {
      problems.push(`archive file ${rel}: SHA-256/count differ from the manifest (tampered or damaged)`);
    }
  }
  for (const a of manifest.plugin_artifacts ?? []) {
    const file = join(archive, a.archived_as);
    if (!existsSync(file)) problems.push(`archive file ${a.archived_as}: missing`);
    else if (digestFile(file).sha256 !== a.sha256)
      problems.push(`archive file ${a.archived_as}: SHA-256 differs from the manifest (tampered or damaged)`);
  }
  const seal = join(archive, 'archive_seal.json');
  if (!existsSync(seal)) problems.push('archive file archive_seal.json: missing');
  else if (sha256(readFileSync(seal)) !== manifest.seal_sha256)
    problems.push('archive file archive_seal.json: SHA-256 differs from the manifest');
  else if (readJsonFile(ArchiveSeal, seal).selection_digest !== manifest.selection_digest) {
    problems.push('archive file archive_seal.json: selection digest differs from the manifest');
  }
  if (problems.length === 0 && selectionDigest(manifest.files) !== manifest.selection_digest) {
    problems.push('archive file manifest.json: selection digest does not match its file list');
  }
  if (problems.length > 0) throw new StageError(problems);
  return manifest;
}
