import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { digestFile, fileEquals, readAndDigest, type ReadDigest } from '../archive/file-digest.ts';
import { ARCHIVE_FORMAT, ARCHIVE_FORMAT_VERSION, archiveRecords, type Manifest } from '../archive/manifest.ts';
import { fingerprintTree, treeChanges, treeDigest, type FileFingerprint } from '../source/fingerprint.ts';
import { lockHolders, readLockTable, type LockTable } from '../source/lock.ts';
import { listShards } from '../source/shards.ts';
import { RECORD_FILES } from '../v2/records.ts';
import { createFreshDir, loadPlan, progress, rate, readJsonFile, sha256, StageError, toolIdentity, writeJsonFile, type ReportBase } from './common.ts';
import type { ArchiveSeal } from './prepare-stage.ts';
import { recordPath, type FileDigests } from './records-dir.ts';

export interface ExportReport extends ReportBase {
  stage: 'export';
  plan_sha256?: string;
  selection_digest?: string;
  complete?: boolean;
  files?: FileDigests;
  retained_messages?: number;
}

/**
 * The sealed prepare workspace must match the plan, the tool, the sources and
 * its own record digests. Returns the seal and the checked record files (with
 * their bytes when read whole).
 */
async function checkWorkspace(workspace: string, planSha: string, locks: LockTable): Promise<{ seal: ArchiveSeal; records: ReadDigest[] }> {
  const sealFile = join(workspace, 'archive_seal.json');
  if (!existsSync(sealFile)) throw new StageError([`workspace ${workspace} has no archive_seal.json: run prepare (without blockers) first`]);
  const seal = readJsonFile<ArchiveSeal>(sealFile);
  const problems: string[] = [];
  if (seal.plan_sha256 !== planSha) problems.push('the plan changed since prepare (plan SHA-256 differs from the seal)');
  if (seal.tool.commit !== toolIdentity().commit) problems.push(`the tool changed since prepare (sealed by ${seal.tool.commit})`);
  const reportFile = join(workspace, 'prepare-report.json');
  if (!existsSync(reportFile) || sha256(readFileSync(reportFile, 'utf8').trim()) !== seal.report_sha256) {
    problems.push('prepare-report.json does not match the seal');
  }
  const fingerprints = readJsonFile<Record<string, FileFingerprint[]>>(join(workspace, 'source-fingerprint.json'));
  const shardDirs = seal.sources.map((s) => listShards(s.data_dir).shards);
  // the sources are hashed by the scan workers, if running, while the record files are read and hashed here
  const sources = Promise.all(seal.sources.map((s) => fingerprintTree(s.data_dir)));
  sources.catch(() => undefined);
  const records = RECORD_FILES.map((name) => readAndDigest(recordPath(join(workspace, 'records'), name)));
  const now = await sources;
  const holders = await lockHolders(shardDirs.flat().map((dir) => join(dir, 'LOCK')), locks);
  for (const [i, s] of seal.sources.entries()) {
    for (const dir of shardDirs[i]!) {
      const holder = holders.get(join(dir, 'LOCK'));
      if (holder) problems.push(`source node ${s.node_id}: ${join(dir, 'LOCK')} is held by ${holder}`);
    }
    const before = fingerprints[String(s.node_id)] ?? [];
    if (treeDigest(now[i]!) !== s.fingerprint_sha256 || treeDigest(before) !== s.fingerprint_sha256) {
      problems.push(`source node ${s.node_id} changed since prepare: ${treeChanges(before, now[i]!).slice(0, 5).join(', ') || 'fingerprint differs'}`);
    }
  }
  for (const [i, name] of RECORD_FILES.entries()) {
    const got = records[i]!;
    const want = seal.files[name];
    if (got.sha256 !== want.sha256 || got.count !== want.count) problems.push(`workspace file records/${name}.jsonl differs from the seal`);
  }
  if (problems.length > 0) throw new StageError(problems);
  return { seal, records };
}

/**
 * Copies the checked record files into the archive and checks every copy
 * against the seal: a file read whole is written from the very bytes that
 * matched the seal and compared back byte for byte; a larger one is copied
 * and hashed again. Returns the files that do not match.
 */
async function copyRecords(from: string, to: string, checked: ReadDigest[], seal: ArchiveSeal): Promise<string[]> {
  const problems: string[] = [];
  const big: number[] = [];
  for (const [i, name] of RECORD_FILES.entries()) {
    const file = recordPath(to, name);
    const data = checked[i]!.data;
    if (data) writeFileSync(file, data, { mode: 0o600, flag: 'wx' });
    else {
      copyFileSync(recordPath(from, name), file);
      big.push(i);
    }
    chmodSync(file, 0o600);
  }
  const rehashed = big.map((i) => digestFile(recordPath(to, RECORD_FILES[i]!)));
  for (const [i, name] of RECORD_FILES.entries()) {
    const data = checked[i]!.data;
    const want = seal.files[name];
    let matches: boolean;
    let count: number;
    if (data) {
      matches = fileEquals(recordPath(to, name), data);
      count = matches ? checked[i]!.count : digestFile(recordPath(to, name)).count;
    } else {
      const got = rehashed[big.indexOf(i)]!;
      matches = got.sha256 === want.sha256 && got.count === want.count;
      count = got.count;
    }
    if (!matches) problems.push(`archive file records/${name}.jsonl does not match the seal after copying`);
    progress(`export: records/${name}.jsonl ${count} records`);
  }
  return problems;
}

/**
 * `migrate export`: rechecks the seal, the sources and every record digest,
 * copies the records into a new owner-only archive, writes the manifest and
 * publishes `COMPLETE` only when every copied file matches.
 */
export async function runExport(planFile: string, workspace: string, archive: string, report: ExportReport): Promise<void> {
  const locks = readLockTable();
  const loaded = loadPlan(planFile, { workspace, archive }, 'export');
  report.plan_sha256 = loaded.sha256;
  const { seal, records: checked } = await checkWorkspace(workspace, loaded.sha256, locks);
  report.selection_digest = seal.selection_digest;
  createFreshDir(archive, 'archive');
  const records = archiveRecords(archive);
  mkdirSync(records, { mode: 0o700 });
  const t0 = Date.now();
  const problems = await copyRecords(join(workspace, 'records'), records, checked, seal);
  for (const f of ['archive_seal.json', 'prepare-report.json']) {
    copyFileSync(join(workspace, f), join(archive, f));
    chmodSync(join(archive, f), 0o600);
  }
  if (problems.length > 0) throw new StageError([...problems, 'COMPLETE not published']);
  const retained = seal.files.messages.count;
  const manifest: Manifest = {
    format: ARCHIVE_FORMAT,
    format_version: ARCHIVE_FORMAT_VERSION,
    created_at: new Date().toISOString(),
    tool: toolIdentity(),
    plan_sha256: loaded.sha256,
    selection_digest: seal.selection_digest,
    seal_sha256: sha256(readFileSync(join(archive, 'archive_seal.json'))),
    prepare_report_sha256: seal.report_sha256,
    retained_messages: retained,
    sources: seal.sources,
    files: seal.files,
  };
  writeJsonFile(join(archive, 'manifest.json'), manifest);
  writeFileSync(join(archive, 'COMPLETE'), `${sha256(readFileSync(join(archive, 'manifest.json')))}\n`, { mode: 0o600, flag: 'wx' });
  progress(`export: ${retained} messages archived (${rate(retained, Date.now() - t0)})`);
  report.files = seal.files;
  report.retained_messages = retained;
  report.complete = true;
  report.status = 'exported';
}
