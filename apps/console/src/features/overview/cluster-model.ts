import type { ConsoleNode, DebugCluster } from '@parley/shared';
import type { NodeView } from './view-model.ts';

/** One node of the cluster as the overview's cluster card shows it. */
export interface ClusterMemberRow {
  id: number;
  name: string;
  /** host:port of its API as the node reports it ('' when unknown). */
  api: string;
  live: boolean;
  slots: number[];
  /** The console's node whose URL is this member's API address, when the console polls it. */
  consoleNodeId?: string;
}

/** The cluster card's content: the slot map's summary and every member. */
export interface ClusterSummary {
  clusterId: string;
  controllerLeader: number | undefined;
  stateRevision: number;
  slotCount: number;
  hashSlotCount: number;
  /** Slots with no live owner. */
  unowned: number;
  members: ClusterMemberRow[];
}

/**
 * The console node to read `/debug/cluster` from: the first with a current
 * snapshot whose node section says it is a cluster node (it reports a slot
 * count); undefined for single nodes.
 */
export function clusterSource(views: readonly NodeView[]): ConsoleNode | undefined {
  const v = views.find((x) => x.status.kind === 'ok' && !x.status.stale && (x.top?.node.slot_count ?? 0) > 0);
  return v?.node;
}

function hostPort(url: string): string | undefined {
  try {
    return new URL(url).host;
  } catch {
    return undefined;
  }
}

/** Members from `/debug/cluster`, matched to the console's configured nodes by API address. */
export function clusterSummary(d: DebugCluster, configured: readonly ConsoleNode[]): ClusterSummary {
  const byHost = new Map<string, ConsoleNode>();
  for (const n of configured) {
    const h = hostPort(n.url);
    if (h) byHost.set(h, n);
  }
  const members = (d.nodes ?? []).map((m): ClusterMemberRow => {
    const known = m.api_addr ? byHost.get(m.api_addr) : undefined;
    return { id: m.node_id, name: m.name, api: m.api_addr, live: m.live, slots: m.slots, ...(known ? { consoleNodeId: known.id } : {}) };
  });
  return {
    clusterId: d.cluster_id ?? '',
    controllerLeader: d.controller_leader,
    stateRevision: d.state_revision,
    slotCount: d.slot_count ?? d.slots.length,
    hashSlotCount: d.hash_slot_count ?? 0,
    unowned: d.slots.filter((s) => s.leader_id === 0).length,
    members: members.sort((a, b) => a.id - b.id),
  };
}

/** Names of the members `/debug/cluster` reports gone (no heartbeat), by node id. */
export function goneMembers(d: DebugCluster): string[] {
  return (d.nodes ?? [])
    .filter((m) => !m.live)
    .sort((a, b) => a.node_id - b.node_id)
    .map((m) => m.name || `node ${m.node_id}`);
}
