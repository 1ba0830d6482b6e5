import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Collector } from '../prepare/collector.ts';
import type { Finding } from '../prepare/findings.ts';
import { findMissingConversations } from '../prepare/missing.ts';
import { finishRecords, type FinishContext } from '../prepare/finish.ts';
import { mergeNodes, type AuthorityReport, type NodeScan } from '../prepare/merge.ts';
import { readSlotLogs, readTopology, type Topology } from '../source/cluster.ts';
import { planRefusals } from '../prepare/plan-checks.ts';
import { pluginReport, type PluginReport } from '../prepare/plugins.ts';
import { Quarantine } from '../prepare/quarantine.ts';
import { RowReader } from '../prepare/raw-row.ts';
import { policyOf } from '../policy.ts';
import { fingerprintTree, hashTree, listTree, treeChanges, treeDigest, type FileFingerprint } from '../source/fingerprint.ts';
import { lockHolders, type LockTable } from '../source/lock.ts';
import { listShards } from '../source/shards.ts';
import { SCAN_WORKERS_MIN_BYTES, ShardScan } from '../v2/scan-pool.ts';
import { progress, rate, StageError, type LoadedPlan } from './common.ts';
import { openStageWorkspace } from './workspace.ts';
import { closeRecordWriters, openRecordWriters, selectionDigest, type FileDigests } from './records-dir.ts';

/** What prepare learned about one source node. */
export interface SourceSummary {
  node_id: number;
  data_dir: string;
  shards: number;
  format_major_versions: number[];
  /** Live keys read; index entries (rebuilt from rows) are skipped unread. */
  keys_read: number;
  fingerprint_sha256: string;
}

/** The result of scanning and checking the sources (no files beyond the records). */
export interface PrepareOutcome {
  sources: SourceSummary[];
  fingerprints: Record<string, FileFingerprint[]>;
  files: FileDigests;
  selection_digest: string;
  counts: Record<string, number>;
  retained_messages: number;
  blockers: Finding[];
  warnings: Finding[];
  warning_totals: Record<string, number>;
  /** Live memberships without a v2 conversation the target hides until a new message. */
  hidden_memberships: number;
  /** Conversations whose stored unread count `derive_unread_from_boundaries` leaves in the archive. */
  archived_unread: number;
  /** Rows left out of the target (kept in the archive's excluded records), per reason. */
  excluded: Record<string, number>;
  /** Shards that could not be read (diagnose goes on without them; prepare stops). */
  unreadable: string[];
  /** Several source nodes: which replicas were taken and why. */
  authority?: AuthorityReport;
  plugins: PluginReport;
}

/** `diagnose` reads on past unreadable shards and reports them; `prepare` stops at them. */
export type ScanMode = 'prepare' | 'diagnose';

/**
 * Refuses sources that are in use (their LOCK held in `locks`), mis-sized or
 * unreadable; returns their shard dirs. `meanwhile` (starting read-only work
 * on sources that passed the other checks) runs before the lock table is
 * awaited; what it throws is thrown after the lock problems.
 */
async function checkSources(
  loaded: LoadedPlan,
  locks: LockTable,
  meanwhile: () => void,
): Promise<{ shardDirs: string[][]; topology?: Topology }> {
  const problems: string[] = [];
  const all = loaded.plan.sources.map((s) => listShards(s.data_dir));
  const topo = readTopology(loaded.plan.sources);
  problems.push(...topo.problems);
  const shapeOk =
    topo.problems.length === 0 && all.every(({ shards, problem }, i) => !problem && shards.length === loaded.plan.sources[i]!.shard_count);
  let failure: unknown;
  if (shapeOk) {
    try {
      meanwhile();
    } catch (err) {
      failure = err;
    }
  }
  const clusterDbs = loaded.plan.sources.map((s) => clusterDbDirs(s.data_dir));
  const holders = await lockHolders(
    [...all.flatMap(({ shards }) => shards), ...clusterDbs.flat()].map((dir) => join(dir, 'LOCK')),
    locks,
  );
  for (const [i, s] of loaded.plan.sources.entries()) {
    const { shards, problem } = all[i]!;
    if (problem) problems.push(`source node ${s.node_id}: ${problem}`);
    else if (shards.length !== s.shard_count) {
      problems.push(
        `source node ${s.node_id}: plan says shard_count ${s.shard_count} but ${s.data_dir} has ${shards.length} shard directories`,
      );
    }
    for (const dir of [...shards, ...clusterDbs[i]!]) {
      const holder = holders.get(join(dir, 'LOCK'));
      if (holder) problems.push(`source node ${s.node_id}: ${join(dir, 'LOCK')} is held by ${holder}; stop the v2 node first`);
    }
  }
  if (problems.length > 0) throw new StageError(problems);
  if (failure !== undefined) throw failure;
  return { shardDirs: all.map(({ shards }) => shards), topology: topo.topology };
}

/** The cluster Pebble DBs of a node data dir (slot logs, config log), for the LOCK check. */
export function clusterDbDirs(dataDir: string): string[] {
  const logdb = join(dataDir, 'cluster', 'logdb');
  const out = existsSync(logdb)
    ? readdirSync(logdb)
        .filter((n) => /^shard\d{3}$/.test(n))
        .map((n) => join(logdb, n))
    : [];
  const cfg = join(dataDir, 'cluster', 'config', 'cfglogdb');
  return existsSync(cfg) ? [...out, cfg] : out;
}

/**
 * Reads every shard of every source read-only, decodes and checks the v2
 * tables and writes the record files into `recordsDir`. `locks`: the lock
 * table, read when the stage started.
 */
export async function collectRecords(
  loaded: LoadedPlan,
  recordsDir: string,
  locks: LockTable,
  mode: ScanMode = 'prepare',
): Promise<PrepareOutcome> {
  // the sources are listed, then hashed on the hashing thread while they are read here
  const bytes: number[] = [];
  let hashed: Promise<FileFingerprint[][]> = Promise.resolve([]);
  const { shardDirs, topology } = await checkSources(loaded, locks, () => {
    const trees = loaded.plan.sources.map((s) => listTree(s.data_dir));
    for (const t of trees) bytes.push(t.reduce((n, f) => n + f.size, 0));
    hashed = Promise.all(trees.map((t, i) => hashTree(loaded.plan.sources[i]!.data_dir, t)));
    hashed.catch(() => undefined); // awaited once the shards are read
  });
  const policy = policyOf(loaded.plan);
  const refused = planRefusals(loaded.plan);
  if (refused.length > 0) throw new StageError(refused);
  const reader = new RowReader((node, shard) => shardDirs[loaded.plan.sources.findIndex((s) => s.node_id === node)]?.[shard]);
  try {
    const shardCounts = new Map(loaded.plan.sources.map((s, i) => [s.node_id, shardDirs[i]!.length]));
    const bound = Quarantine.bind(loaded.plan, policy, shardCounts, reader);
    if (bound.problems.length > 0) throw new StageError(bound.problems);
    const ctx: FinishContext = { plan: loaded.plan, policy, quarantine: bound.quarantine, reader, shardCounts };
    return await scanAndFinish(loaded, recordsDir, shardDirs, bytes, hashed, ctx, mode, topology);
  } finally {
    reader.close();
  }
}

async function scanAndFinish(
  loaded: LoadedPlan,
  recordsDir: string,
  shardDirs: string[][],
  bytes: number[],
  hashed: Promise<FileFingerprint[][]>,
  ctx: FinishContext,
  mode: ScanMode,
  topology: Topology | undefined,
): Promise<PrepareOutcome> {
  const writers = openRecordWriters(recordsDir);
  const multi = topology !== undefined && loaded.plan.sources.length > 1;
  const scans: NodeScan[] = [];
  const sources: SourceSummary[] = [];
  const problems: string[] = [];
  let collector: Collector | undefined;
  const started = Date.now();
  for (const [i, s] of loaded.plan.sources.entries()) {
    const dirs = shardDirs[i]!;
    // several nodes: each is read into records of its own, merged once every replica is known
    const nodeRecords = join(recordsDir, '..', 'nodes', `node-${s.node_id}`);
    if (multi) mkdirSync(dirname(nodeRecords), { recursive: true, mode: 0o700 });
    const out = multi ? openRecordWriters(nodeRecords) : writers;
    const c = new Collector(s.node_id, dirs.length, out.messages, out.archived, {
      policy: ctx.policy,
      quarantine: ctx.quarantine,
      excludedOut: out.excluded,
      keepLog: multi,
    });
    collector = c;
    if (multi) scans.push({ node_id: s.node_id, collector: c, records: nodeRecords, writers: out });
    const summary: SourceSummary = {
      node_id: s.node_id,
      data_dir: s.data_dir,
      shards: dirs.length,
      format_major_versions: [],
      keys_read: 0,
      fingerprint_sha256: '',
    };
    const scan = new ShardScan(dirs, bytes[i]! >= SCAN_WORKERS_MIN_BYTES);
    try {
      for (const [shard, dir] of dirs.entries()) {
        const read = await scan.read(shard, dir, () => c.sink(shard));
        if ('unreadable' in read) {
          problems.push(`source node ${s.node_id} shard ${shard}: ${read.unreadable}`);
          continue;
        }
        summary.format_major_versions.push(read.version);
        if (read.keys === undefined) {
          problems.push(`source node ${s.node_id} shard ${shard}: format major version ${read.version} is not supported`);
          continue;
        }
        summary.keys_read += read.keys;
        const ms = Date.now() - started;
        progress(
          `prepare: node ${s.node_id} shard ${shard + 1}/${dirs.length}: ${read.keys} keys read; ${c.retained} messages so far (${rate(c.retained, ms)})`,
        );
      }
    } finally {
      scan.close();
    }
    sources.push(summary);
  }
  if (problems.length > 0 && mode === 'prepare') {
    await closeRecordWriters(writers);
    throw new StageError(problems);
  }
  const fingerprints: Record<string, FileFingerprint[]> = {};
  const before = await hashed;
  for (const [i, s] of loaded.plan.sources.entries()) {
    fingerprints[String(s.node_id)] = before[i]!;
    sources[i]!.fingerprint_sha256 = treeDigest(before[i]!);
  }
  // the reading is done: the sources are fingerprinted again (on the hashing thread) and the streamed files
  // synced while the rest is written
  const after = Promise.all(loaded.plan.sources.map((s) => fingerprintTree(s.data_dir)));
  after.catch(() => undefined);
  let c = collector!;
  let authority: AuthorityReport | undefined;
  if (multi) {
    for (const sc of scans) await closeRecordWriters(sc.writers!);
    const slotLogs = new Map(loaded.plan.sources.map((s) => [s.node_id, readSlotLogs(s.data_dir, topology.slot_count)]));
    c = new Collector(0, 0, writers.messages, writers.archived, {
      policy: ctx.policy,
      quarantine: ctx.quarantine,
      excludedOut: writers.excluded,
    });
    const merged = mergeNodes(topology, slotLogs, scans, c, writers, loaded.plan.metadata?.conversation_replicas ?? []);
    if (merged.problems.length > 0) throw new StageError(merged.problems);
    authority = merged.report;
    progress(
      `prepare: ${scans.length} nodes merged: ${merged.report.channels.length} channels, ${c.retained} committed messages, ${merged.report.slots_diverging.length} slots diverging`,
    );
  }
  writers.archived.close().catch(() => undefined);
  const finished = await finishRecords(c, writers, recordsDir, ctx);
  const files = await closeRecordWriters(writers);
  if (finished.problems.length > 0) throw new StageError(finished.problems);
  const plugins = pluginReport(loaded.plan, recordsDir);
  if (plugins.problems.length > 0) throw new StageError(plugins.problems);
  const missing = findMissingConversations(recordsDir, ctx.policy);
  if (missing.problems.length > 0) throw new StageError(missing.problems);
  for (const m of missing.missing) {
    const entry = {
      capture_digest: m.capture_digest,
      uid_sha256: m.uid_sha256,
      channel_sha256: m.channel_sha256,
      retained_tail: m.retained_tail,
    };
    c.findings.warn({
      code: 'missing_conversation',
      detail: m.hidden
        ? `live member without a v2 conversation (deleted, or joined after the last message): hidden until a new message, its history up to seq ${m.retained_tail} no longer pulled`
        : 'live member without a v2 conversation: kept visible (metadata.missing_conversations)',
      uid: m.uid,
      channel_id: m.channel_id,
      channel_type: m.channel_type,
      evidence: { ...entry, hidden: m.hidden },
    });
  }
  const now = await after;
  for (const [i, s] of loaded.plan.sources.entries()) {
    const changes = treeChanges(fingerprints[String(s.node_id)]!, now[i]!);
    if (changes.length > 0) throw new StageError([`source node ${s.node_id} changed while it was read: ${changes.slice(0, 5).join(', ')}`]);
  }
  return {
    sources,
    fingerprints,
    files,
    selection_digest: selectionDigest(files),
    counts: c.counts,
    retained_messages: c.retained,
    blockers: c.findings.blockers,
    warnings: c.findings.warnings,
    warning_totals: c.findings.warningTotals(),
    hidden_memberships: missing.missing.filter((m) => m.hidden).length,
    archived_unread: finished.archived_unread,
    excluded: finished.excluded,
    unreadable: problems,
    plugins: plugins.report,
    ...(authority ? { authority } : {}),
  };
}

/**
 * Creates the prepare workspace, or reuses one left by an interrupted prepare
 * of the same plan and tool (its partial records are discarded; a sealed
 * workspace is never reused).
 */
export function openPrepareWorkspace(workspace: string, loaded: LoadedPlan): void {
  if (openStageWorkspace(workspace, 'prepare', loaded)) {
    for (const d of ['records', 'nodes']) rmSync(join(workspace, d), { recursive: true, force: true });
  }
}
