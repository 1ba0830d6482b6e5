import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  CLUSTER_META_FILE,
  DATA_FORMAT_FILE,
  DATA_FORMAT_VERSION,
  MIGRATION_MARKER_FILE,
  STARTED_MARKER_FILE,
  ClusterMeta,
  DataFormat,
  MigrationMarker,
} from '@parley/shared';
import { openPostgresStoreReader, openStoreReader, type StoreReader } from '@parley/store';
import { targetStoreRefusals } from '../prepare/plan-checks.ts';
import { postgresLocation } from '../target/write-cluster.ts';
import { archiveRecords, openArchive } from '../archive/manifest.ts';
import { policyOf } from '../policy.ts';
import { openStageWorkspace } from './workspace.ts';
import type { StageContext } from '../run-stage.ts';
import { compareTarget, type Mismatch } from '../verify/compare.ts';
import { canonicalJson, loadPlan, progress, rate, readJsonFile, sha256, StageError, type ReportBase } from './common.ts';

export interface VerifyReport extends ReportBase {
  stage: 'verify';
  plan_sha256?: string;
  selection_digest?: string;
  node_count?: number;
  retained_messages?: number;
  verified_message_replicas?: number;
  cutover_ready?: false;
  targets: Array<{ node_id: number; data_dir: string; content_sha256: string; checked: Record<string, number> }>;
  mismatches: Array<Mismatch & { node_id: number }>;
}

/**
 * `migrate verify`: from a fresh workspace, the plan and the archive, checks
 * every target's startup artifacts and compares its store with the archive
 * field by field (a PostgreSQL target's one shared store once, read-only). Status `offline_verified`; `cutover_ready` stays false
 * (acceptance and client checks remain).
 */
export async function runVerify(
  planFile: string,
  workspace: string,
  archive: string,
  report: VerifyReport,
  ctx: StageContext,
): Promise<void> {
  const loaded = loadPlan(planFile, { workspace, archive }, 'verify');
  report.plan_sha256 = loaded.sha256;
  openStageWorkspace(workspace, 'verify', loaded, archive);
  ctx.ownsWorkspace = true;
  const manifest = openArchive(archive, loaded.sha256);
  report.selection_digest = manifest.selection_digest;
  const t = loaded.plan.target;
  report.node_count = t.nodes.length;
  const manifestSha = sha256(readFileSync(join(archive, 'manifest.json')));
  const wantCluster = {
    cluster_id: t.cluster_id,
    nodes: t.nodes.map((n) => ({ node_id: n.node_id, addr: n.addr })),
    initial_slot_count: t.slot_count,
    hash_slot_count: t.hash_slot_count,
    slot_replica_n: t.replicas,
    channel_replica_n: t.channel_replicas,
    created_at: t.created_at,
  };
  const problems: string[] = [];
  const refused = targetStoreRefusals(loaded.plan);
  if (refused.length > 0) throw new StageError(refused);
  // A PostgreSQL target: one store every node shares, compared once; each node's directory holds only markers.
  const pg = t.store ? postgresLocation(t.store) : undefined;
  let shared: { digest: { sha256: string }; mismatches: Mismatch[]; checked: Record<string, number> } | undefined;
  const compareStore = async (store: StoreReader, label: string) => {
    const t0 = Date.now();
    const digest = await store.contentDigest();
    const { mismatches, checked } = await compareTarget(store.snapshot, archiveRecords(archive), policyOf(loaded.plan));
    const fields = Object.values(checked).reduce((x, y) => x + y, 0);
    progress(
      `verify: ${label}: ${manifest.retained_messages} messages and ${fields} fields compared, ${mismatches.length} mismatches (${rate(manifest.retained_messages, Date.now() - t0)})`,
    );
    return { digest, mismatches, checked };
  };
  for (const n of t.nodes) {
    const dir = n.data_dir;
    progress(`verify: node ${n.node_id} (${dir})`);
    const files = [DATA_FORMAT_FILE, MIGRATION_MARKER_FILE, CLUSTER_META_FILE, ...(pg ? [] : ['parley.db'])];
    const need = files.filter((f) => !existsSync(join(dir, f)));
    if (need.length > 0) {
      problems.push(`target ${dir}: missing ${need.join(', ')}`);
      continue;
    }
    if (existsSync(join(dir, STARTED_MARKER_FILE))) {
      problems.push(`target ${dir} has been started; a started target cannot be verified as an initial import`);
      continue;
    }
    const format = readJsonFile(DataFormat, join(dir, DATA_FORMAT_FILE));
    if (format.data_format !== DATA_FORMAT_VERSION)
      problems.push(`target ${dir}: data format ${format.data_format}, expected ${DATA_FORMAT_VERSION}`);
    const marker = readJsonFile(MigrationMarker, join(dir, MIGRATION_MARKER_FILE));
    if (marker.node_id !== n.node_id) problems.push(`target ${dir}: marker node_id ${marker.node_id}, plan says ${n.node_id}`);
    if (marker.plan_sha256 !== loaded.sha256) problems.push(`target ${dir}: imported from another plan`);
    if (marker.archive_manifest_sha256 !== manifestSha) problems.push(`target ${dir}: imported from another archive`);
    if (marker.selection_digest !== manifest.selection_digest)
      problems.push(`target ${dir}: marker selection digest differs from the archive`);
    if (canonicalJson(marker.cluster) !== canonicalJson(wantCluster))
      problems.push(`target ${dir}: cluster metadata in the marker differs from the plan`);
    if (canonicalJson(readJsonFile(ClusterMeta, join(dir, CLUSTER_META_FILE))) !== canonicalJson(wantCluster))
      problems.push(`target ${dir}: cluster.json differs from the plan`);
    for (const [file, recorded] of [
      [MIGRATION_MARKER_FILE, marker.store],
      [DATA_FORMAT_FILE, format.store],
    ] as const) {
      if (canonicalJson(recorded ?? null) !== canonicalJson(pg ?? null))
        problems.push(
          `target ${dir}: ${file} names ${recorded ? `store ${canonicalJson(recorded)}` : 'no store'}, the plan ${pg ? 'its target.store' : 'none'}`,
        );
    }
    let result: NonNullable<typeof shared>;
    if (pg) {
      if (!shared) {
        const store = await openPostgresStoreReader(t.store!.postgres_url);
        try {
          shared = await compareStore(store, `schema ${pg.schema}`);
        } finally {
          await store.close();
        }
        report.mismatches.push(...shared.mismatches.map((m) => ({ ...m, node_id: n.node_id })));
      }
      result = shared;
    } else {
      const store = await openStoreReader(dir);
      try {
        result = await compareStore(store, `node ${n.node_id}`);
      } finally {
        await store.close();
      }
      report.mismatches.push(...result.mismatches.map((m) => ({ ...m, node_id: n.node_id })));
    }
    if (result.digest.sha256 !== marker.content_sha256) problems.push(`target ${dir}: store content differs from the marker's fingerprint`);
    report.targets.push({ node_id: n.node_id, data_dir: dir, content_sha256: result.digest.sha256, checked: result.checked });
  }
  if (report.mismatches.length > 0)
    problems.push(`${report.mismatches.length} field mismatches between the archive and the targets (listed in mismatches)`);
  if (problems.length > 0) throw new StageError(problems);
  report.retained_messages = manifest.retained_messages;
  report.verified_message_replicas = manifest.retained_messages * t.channel_replicas;
  report.cutover_ready = false;
  report.status = 'offline_verified';
}
