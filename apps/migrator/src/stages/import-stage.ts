import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ClusterMeta } from '@parley/shared';
import { archiveRecords, openArchive } from '../archive/manifest.ts';
import { policyOf } from '../policy.ts';
import { openStageWorkspace } from './workspace.ts';
import type { StageContext } from '../run-stage.ts';
import { writeNode, type NodeResult } from '../target/write-node.ts';
import { postgresLocation, writePostgresTarget } from '../target/write-cluster.ts';
import { targetStoreRefusals } from '../prepare/plan-checks.ts';
import { loadPlan, progress, rate, sha256, StageError, type ReportBase } from './common.ts';

export interface ImportReport extends ReportBase {
  stage: 'import';
  plan_sha256?: string;
  selection_digest?: string;
  retained_messages?: number;
  /** Live memberships without a v2 conversation, imported hidden until a new message (seed: `hidden_memberships`). */
  hidden_memberships?: number;
  /** Stored v2 unread counts left in the archive by `derive_unread_from_boundaries` (seed: `archived_unread`). */
  archived_unread?: number;
  targets: NodeResult[];
}

/**
 * `migrate import`: from the plan and the complete archive alone (never the
 * prepare workspace), writes every target node's data directory (with
 * `target.store`: the one PostgreSQL store every node shares, and each node's
 * markers); targets stay stopped. Status `imported`.
 */
export async function runImport(
  planFile: string,
  workspace: string,
  archive: string,
  report: ImportReport,
  ctx: StageContext,
): Promise<void> {
  const loaded = loadPlan(planFile, { workspace, archive }, 'import');
  report.plan_sha256 = loaded.sha256;
  openStageWorkspace(workspace, 'import', loaded, archive);
  ctx.ownsWorkspace = true;
  const manifest = openArchive(archive, loaded.sha256);
  report.selection_digest = manifest.selection_digest;
  report.retained_messages = manifest.retained_messages;
  const t = loaded.plan.target;
  const refused = targetStoreRefusals(loaded.plan);
  if (refused.length > 0) throw new StageError([...refused, 'nothing was imported']);
  const cluster: ClusterMeta = {
    cluster_id: t.cluster_id,
    nodes: t.nodes.map((n) => ({ node_id: n.node_id, addr: n.addr })),
    initial_slot_count: t.slot_count,
    hash_slot_count: t.hash_slot_count,
    slot_replica_n: t.replicas,
    channel_replica_n: t.channel_replicas,
    created_at: t.created_at,
  };
  const identity = {
    plan_sha256: loaded.sha256,
    archive_manifest_sha256: sha256(readFileSync(join(archive, 'manifest.json'))),
    selection_digest: manifest.selection_digest,
  };
  if (t.store) {
    const where = postgresLocation(t.store);
    progress(`import: ${t.nodes.length} nodes → PostgreSQL ${where.host}:${where.port}/${where.database} schema ${where.schema}`);
    const t0 = Date.now();
    report.targets.push(
      ...(await writePostgresTarget(t.store, t.nodes, cluster, identity, archiveRecords(archive), policyOf(loaded.plan))),
    );
    progress(
      `import: schema ${where.schema}: ${manifest.retained_messages} messages (${rate(manifest.retained_messages, Date.now() - t0)}), content ${report.targets[0]!.content_sha256.slice(0, 12)}; nodes ${t.nodes.map((n) => n.node_id).join(', ')} written`,
    );
  }
  for (const n of t.store ? [] : t.nodes) {
    progress(`import: node ${n.node_id} → ${n.data_dir}`);
    const t0 = Date.now();
    const result = await writeNode(n.data_dir, n.node_id, cluster, identity, archiveRecords(archive), policyOf(loaded.plan));
    progress(
      `import: node ${n.node_id} ${result.reused ? 'already imported; fingerprint checked' : 'written'}: ${manifest.retained_messages} messages (${rate(manifest.retained_messages, Date.now() - t0)}), content ${result.content_sha256.slice(0, 12)}`,
    );
    report.targets.push(result);
  }
  const first = report.targets[0]?.derived ?? {};
  report.hidden_memberships = first.hidden_memberships ?? 0;
  report.archived_unread = first.archived_unread ?? 0;
  report.status = 'imported';
}
