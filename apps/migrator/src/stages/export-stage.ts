import { chmodSync, closeSync, constants, copyFileSync, existsSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import { copyFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ArchiveSeal, SourceFingerprints } from '@parley/shared';
import { createFile, syncAndClose } from '../archive/durable.ts';
import { digestFile, type FileDigest } from '../archive/file-digest.ts';
import { ARCHIVE_FORMAT, ARCHIVE_FORMAT_VERSION, archiveRecords, type Manifest } from '../archive/manifest.ts';
import { fingerprintTree, treeChanges, treeDigest, type FileFingerprint } from '../source/fingerprint.ts';
import { lockHolders, readLockTable, type LockTable } from '../source/lock.ts';
import { listShards } from '../source/shards.ts';
import { RECORD_FILES } from '../v2/records.ts';
import { loadPlan, progress, rate, readJsonFile, sha256, StageError, toolIdentity, type ReportBase } from './common.ts';
import { claimArchive, releaseArchive, type ExportIdentity } from './archive-claim.ts';
import { fileSha256 } from '../prepare/plugins.ts';
import { recordPath, type FileDigests } from './records-dir.ts';

export interface ExportReport extends ReportBase {
  stage: 'export';
  plan_sha256?: string;
  selection_digest?: string;
  complete?: boolean;
  /** The archive was already complete for this seal (a rerun): rechecked, not written again. */
  reused?: boolean;
  files?: FileDigests;
  retained_messages?: number;
}

/** The seal of a prepare workspace, with what does not match the plan, the tool or the prepare report. */
function readSeal(workspace: string, planSha: string): { seal: ArchiveSeal; problems: string[] } {
  const sealFile = join(workspace, 'archive_seal.json');
  if (!existsSync(sealFile))
    throw new StageError([`workspace ${workspace} has no archive_seal.json: run prepare (without blockers) first`]);
  const seal = readJsonFile(ArchiveSeal, sealFile);
  const problems: string[] = [];
  if (seal.plan_sha256 !== planSha) problems.push('the plan changed since prepare (plan SHA-256 differs from the seal)');
  if (seal.tool.commit !== toolIdentity().commit) problems.push(`the tool changed since prepare (sealed by ${seal.tool.commit})`);
  const reportFile = join(workspace, 'prepare-report.json');
  if (!existsSync(reportFile) || sha256(readFileSync(reportFile, 'utf8').trim()) !== seal.report_sha256) {
    problems.push('prepare-report.json does not match the seal');
  }
  return { seal, problems };
}

/**
 * The sources of a sealed workspace, rechecked: in use (a LOCK held) or
 * changed since prepare (`now`: their fingerprints, being taken). Returns the
 * problems.
 */
async function checkSources(workspace: string, seal: ArchiveSeal, now: Promise<FileFingerprint[][]>, locks: LockTable): Promise<string[]> {
  const fingerprints = readJsonFile(SourceFingerprints, join(workspace, 'source-fingerprint.json'));
  const shardDirs = seal.sources.map((s) => listShards(s.data_dir).shards);
  const current = await now;
  const holders = await lockHolders(
    shardDirs.flat().map((dir) => join(dir, 'LOCK')),
    locks,
  );
  const problems: string[] = [];
  for (const [i, s] of seal.sources.entries()) {
    for (const dir of shardDirs[i]!) {
      const holder = holders.get(join(dir, 'LOCK'));
      if (holder) problems.push(`source node ${s.node_id}: ${join(dir, 'LOCK')} is held by ${holder}`);
    }
    const before = fingerprints[String(s.node_id)] ?? [];
    if (treeDigest(current[i]!) !== s.fingerprint_sha256 || treeDigest(before) !== s.fingerprint_sha256) {
      problems.push(
        `source node ${s.node_id} changed since prepare: ${treeChanges(before, current[i]!).slice(0, 5).join(', ') || 'fingerprint differs'}`,
      );
    }
  }
  return problems;
}

/**
 * Copies the workspace's record files into the archive, owner-only: the
 * kernel copies them, several at once on the libuv thread pool, and each copy
 * is read back and hashed here as soon as it is made. Returns the copies'
 * digests and their open descriptors, for flushing.
 */
async function copyRecords(from: string, to: string): Promise<{ digests: FileDigest[]; fds: number[] }> {
  const fds: number[] = [];
  const copied = RECORD_FILES.map((name) => copyFile(recordPath(from, name), recordPath(to, name), constants.COPYFILE_EXCL));
  for (const c of copied) c.catch(() => undefined); // awaited in order below
  try {
    const digests: FileDigest[] = [];
    for (const [i, name] of RECORD_FILES.entries()) {
      await copied[i];
      const file = recordPath(to, name);
      chmodSync(file, 0o600);
      fds.push(openSync(file, 'r'));
      digests.push(digestFile(file));
    }
    return { digests, fds };
  } catch (err) {
    await Promise.allSettled(copied);
    for (const fd of fds) closeSync(fd);
    throw err;
  }
}

/**
 * Copies the plugin programs the plan names into the archive
 * (`plugins/node-<id>/...`, owner-only), each checked against its prepare
 * digest before and after the copy ("source and plugin files unchanged").
 */
function copyArtifacts(archive: string, seal: ArchiveSeal): { fds: number[]; problems: string[] } {
  const fds: number[] = [];
  const problems: string[] = [];
  for (const a of seal.plugin_artifacts ?? []) {
    const to = join(archive, a.archived_as);
    mkdirSync(dirname(to), { recursive: true, mode: 0o700 });
    if (fileSha256(a.path) !== a.sha256) {
      problems.push(`plugin program ${a.path} changed since prepare`);
      continue;
    }
    copyFileSync(a.path, to, constants.COPYFILE_EXCL);
    chmodSync(to, 0o600);
    if (fileSha256(to) !== a.sha256) problems.push(`plugin program ${a.path}: the archived copy differs`);
    fds.push(openSync(to, 'r'), openSync(dirname(to), 'r'));
  }
  return { fds, problems };
}

/**
 * `migrate export`: rechecks the seal, the sources and every record digest,
 * copies the records into a new owner-only archive, writes the manifest and
 * publishes `COMPLETE` only when every copied file matches the seal, once
 * everything is on disk. A failed export removes the archive it started.
 */
export async function runExport(planFile: string, workspace: string, archive: string, report: ExportReport): Promise<void> {
  const locks = readLockTable();
  const loaded = loadPlan(planFile, { workspace, archive }, 'export');
  report.plan_sha256 = loaded.sha256;
  const { seal, problems } = readSeal(workspace, loaded.sha256);
  // the sources are hashed on the hashing thread while the records are copied and hashed here
  const now = Promise.all(seal.sources.map((s) => fingerprintTree(s.data_dir)));
  now.catch(() => undefined);
  if (problems.length > 0) throw new StageError([...problems, ...(await checkSources(workspace, seal, now, locks))]);
  report.selection_digest = seal.selection_digest;
  const id: ExportIdentity = {
    plan_sha256: loaded.sha256,
    seal_sha256: sha256(readFileSync(join(workspace, 'archive_seal.json'))),
    tool_commit: toolIdentity().commit,
  };
  const done = await claimArchive(archive, id);
  if (done) {
    report.reused = true;
  } else {
    try {
      await writeArchive(workspace, archive, seal, now, locks, loaded.sha256);
    } catch (err) {
      rmSync(archive, { recursive: true, force: true });
      throw err;
    }
    await releaseArchive(archive);
  }
  const retained = seal.files.messages.count;
  report.files = seal.files;
  report.retained_messages = retained;
  report.complete = true;
  report.status = 'exported';
}

async function writeArchive(
  workspace: string,
  archive: string,
  seal: ArchiveSeal,
  now: Promise<FileFingerprint[][]>,
  locks: LockTable,
  planSha: string,
): Promise<void> {
  const t0 = Date.now();
  const records = archiveRecords(archive);
  mkdirSync(records, { mode: 0o700 });
  const bytes = RECORD_FILES.reduce((n, f) => n + seal.files[f].bytes, 0);
  progress(`export: copying ${RECORD_FILES.length} record files (${(bytes / 1048576).toFixed(1)} MiB) into ${archive}`);
  const { digests: copies, fds } = await copyRecords(join(workspace, 'records'), records);
  const plugins = copyArtifacts(archive, seal);
  fds.push(...plugins.fds);
  const sealText = readFileSync(join(workspace, 'archive_seal.json'));
  fds.push(createFile(join(archive, 'archive_seal.json'), sealText));
  fds.push(createFile(join(archive, 'prepare-report.json'), readFileSync(join(workspace, 'prepare-report.json'))));
  const manifest: Manifest = {
    format: ARCHIVE_FORMAT,
    format_version: ARCHIVE_FORMAT_VERSION,
    created_at: new Date().toISOString(),
    tool: toolIdentity(),
    plan_sha256: planSha,
    selection_digest: seal.selection_digest,
    seal_sha256: sha256(sealText),
    prepare_report_sha256: seal.report_sha256,
    retained_messages: seal.files.messages.count,
    sources: seal.sources,
    files: seal.files,
    plugin_artifacts: seal.plugin_artifacts ?? [],
  };
  const manifestText = `${JSON.stringify(manifest, null, 2)}\n`;
  fds.push(createFile(join(archive, 'manifest.json'), manifestText));
  // every file and directory entry goes to disk at once (libuv thread pool) while the sources are checked
  const flushed = syncAndClose([...fds, openSync(records, 'r'), openSync(archive, 'r')]);
  flushed.catch(() => undefined);
  const problems = [...plugins.problems, ...(await checkSources(workspace, seal, now, locks))];
  for (const [i, name] of RECORD_FILES.entries()) {
    const got = copies[i]!;
    const want = seal.files[name];
    if (got.sha256 !== want.sha256 || got.count !== want.count) problems.push(`workspace file records/${name}.jsonl differs from the seal`);
    else progress(`export: records/${name}.jsonl ${got.count} records`);
  }
  await flushed;
  if (problems.length > 0) throw new StageError([...problems, 'COMPLETE not published']);
  // COMPLETE is published last, once everything it vouches for is on disk
  await syncAndClose([createFile(join(archive, 'COMPLETE'), `${sha256(manifestText)}\n`), openSync(archive, 'r')]);
  progress(`export: ${seal.files.messages.count} messages archived (${rate(seal.files.messages.count, Date.now() - t0)})`);
}
