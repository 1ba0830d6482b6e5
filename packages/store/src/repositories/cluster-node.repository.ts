import { Buffer } from 'node:buffer';
import type { Db } from '../db.ts';
import { nowMs, type Dialect } from '../dialect.ts';

/** A node of the cluster as it last announced itself; times are unix ms by the database's clock. */
export interface ClusterNode {
  nodeId: number;
  /** What the node published (API, gateway addresses …), as given. */
  addresses: Record<string, string>;
  startedAt: number;
  lastSeen: number;
  stateRevision: number;
}

/** Largest addresses object a node may publish, bytes of JSON. */
const MAX_ADDRESSES_BYTES = 4096;

/** The cluster's nodes (cluster mode): each announces itself on start and on every heartbeat. */
export function createClusterNodeRepository(db: Db, dialect: Dialect) {
  const now = nowMs(dialect);
  return {
    /**
     * Records that `nodeId` is alive now with these addresses and state
     * revision; `started` marks a (re)start, resetting `startedAt`.
     */
    async heartbeat(nodeId: number, addresses: Record<string, string>, stateRevision: number, started = false): Promise<void> {
      const json = JSON.stringify(addresses);
      if (Buffer.byteLength(json) > MAX_ADDRESSES_BYTES) throw new RangeError(`node addresses exceed ${MAX_ADDRESSES_BYTES} bytes`);
      await db
        .insertInto('cluster_nodes')
        .values({ node_id: nodeId, addresses: json, started_at: now, last_seen: now, state_revision: stateRevision })
        .onConflict((oc) =>
          oc.column('node_id').doUpdateSet({
            addresses: json,
            last_seen: (eb) => eb.ref('excluded.last_seen'),
            state_revision: stateRevision,
            ...(started ? { started_at: (eb) => eb.ref('excluded.started_at') } : {}),
          }),
        )
        .execute();
    },

    /** Every node in id order, with the database clock at the time of reading. */
    async list(): Promise<{ now: number; nodes: ClusterNode[] }> {
      const rows = await db
        .selectFrom('cluster_nodes')
        .select(['node_id', 'addresses', 'started_at', 'last_seen', 'state_revision', now.as('now')])
        .orderBy('node_id')
        .execute();
      const at = rows.length > 0 ? Number(rows[0]!.now) : Number((await db.selectNoFrom(now.as('now')).executeTakeFirstOrThrow()).now);
      return {
        now: at,
        nodes: rows.map((r) => ({
          nodeId: Number(r.node_id),
          addresses: JSON.parse(r.addresses) as Record<string, string>,
          startedAt: Number(r.started_at),
          lastSeen: Number(r.last_seen),
          stateRevision: Number(r.state_revision),
        })),
      };
    },

    /** Forgets a node (decommissioned). */
    async remove(nodeId: number): Promise<void> {
      await db.deleteFrom('cluster_nodes').where('node_id', '=', nodeId).execute();
    },
  };
}

export type ClusterNodeRepository = ReturnType<typeof createClusterNodeRepository>;
