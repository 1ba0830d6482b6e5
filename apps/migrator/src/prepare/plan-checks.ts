import type { Plan } from '@parley/shared';
import { parsePostgresUrl } from '@parley/store/postgres-url';

/**
 * The target's store: several nodes share one PostgreSQL store (`target.store`),
 * so a multi-node target without one is refused; the URL must be one the
 * server accepts. Checked at prepare and again by import and verify.
 */
export function targetStoreRefusals(plan: Plan): string[] {
  const t = plan.target;
  if (!t.store) {
    return t.nodes.length > 1
      ? [
          `plan.target.nodes: ${t.nodes.length} target nodes share one store: set plan.target.store to {"driver": "postgres", "postgres_url": …} (SQLite targets have one node)`,
        ]
      : [];
  }
  try {
    parsePostgresUrl(t.store.postgres_url);
    return [];
  } catch (err) {
    return [`plan.target.${(err as Error).message}`];
  }
}

/**
 * Plan members this release cannot carry out, refused at prepare with the
 * member's path (never accepted and ignored). Rules that need the data
 * (quarantine binding, recoveries, missing conversations) are checked where
 * the rows are read.
 */
export function planRefusals(plan: Plan): string[] {
  const out: string[] = [];
  const sources = new Set(plan.sources.map((s) => s.node_id));
  if (plan.metadata?.conversation_lookup !== undefined) {
    out.push(
      'plan.metadata.conversation_lookup: not carried out by this release (conversations are always taken from the authoritative slot replica); remove it',
    );
  }
  out.push(...targetStoreRefusals(plan));
  if (plan.messages?.resolve_duplicate_chains === true && plan.messages.keep_latest_duplicates !== true) {
    out.push(
      'plan.messages.resolve_duplicate_chains: requires plan.messages.keep_latest_duplicates (a chain is resolved by keeping its newest row)',
    );
  }
  for (const [i, p] of (plan.plugin_nodes ?? []).entries()) {
    if (!sources.has(p.source_node_id)) out.push(`plan.plugin_nodes[${i}].source_node_id: ${p.source_node_id} is not a source node`);
  }
  for (const [i, p] of (plan.plugin_configs ?? []).entries()) {
    if (!sources.has(p.source_node_id)) out.push(`plan.plugin_configs[${i}].source_node_id: ${p.source_node_id} is not a source node`);
  }
  for (const [i, a] of (plan.plugin_artifacts ?? []).entries()) {
    if (!sources.has(a.node_id)) out.push(`plan.plugin_artifacts[${i}].node_id: ${a.node_id} is not a source node`);
  }
  if ((plan.metadata?.conversation_replicas ?? []).length > 0 && plan.sources.length < 2) {
    out.push('plan.metadata.conversation_replicas: binds to nothing: a one-node source has no conversation replicas to choose from');
  }
  return out;
}
