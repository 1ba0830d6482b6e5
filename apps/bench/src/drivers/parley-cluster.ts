/**
 * A Parley cluster as a target (`--cluster`): `nodes` processes (ids 1..n)
 * sharing the local PostgreSQL (a schema of their own, dropped by `stop`) and
 * NATS (a cluster id of their own), production defaults otherwise. Users are
 * spread over the nodes by a hash of their uid, so about (n−1)/n of 1:1
 * messages cross nodes, and each channel is sequenced by the owner of its
 * slot, which may be a third node. The nodes are not pinned to a core (the
 * generator still is, to core 1): three nodes, PostgreSQL and NATS share the
 * machine's cores as the scheduler sees fit.
 */
import { randomBytes } from 'node:crypto';
import { crc32 } from '@parley/shared';
import { createTestSchema, TEST_POSTGRES_URL } from '@parley/store/testing';
import { connectJsonRpc } from './jsonrpc-conn.ts';
import { postJson, startParley, storeTokens, syncChannel, tokenOf, type ParleyServer } from './parley-server.ts';
import type { Connection, Deliveries, Driver } from './types.ts';

/** A started cluster: its nodes (for their pids) besides the driver. */
export interface ClusterDriver extends Driver {
  nodes: ParleyServer[];
}

/** Polls every node's `/readyz` until all answer 200 and every slot has a live owner, at most `timeoutMs`. */
async function settled(nodes: readonly ParleyServer[], timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const ok = await Promise.all(
      nodes.map(async (n) => {
        const ready = await fetch(`${n.api}/readyz`).then(
          (r) => r.status === 200,
          () => false,
        );
        const map = (await fetch(`${n.api}/debug/cluster`).then(
          (r) => r.json(),
          () => undefined,
        )) as { nodes: unknown[]; slots: Array<{ leader_id: number }> } | undefined;
        return ready && map !== undefined && map.nodes.length === nodes.length && map.slots.every((s) => s.leader_id > 0);
      }),
    );
    if (ok.every(Boolean)) return;
    if (Date.now() > until) throw new Error(`cluster of ${nodes.length} nodes did not settle within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Starts the cluster and returns its driver (JSON-RPC clients). */
export async function startParleyClusterDriver(count: number, nodeArgs: readonly string[] = []): Promise<ClusterDriver> {
  const schema = createTestSchema('parley_bench');
  const clusterId = `bench${randomBytes(4).toString('hex')}`;
  const nodes: ParleyServer[] = [];
  try {
    nodes.push(
      ...(await Promise.all(
        Array.from({ length: count }, (_, i) =>
          startParley(
            nodeArgs,
            undefined,
            {
              PARLEY_NODE_ID: String(i + 1),
              PARLEY_STORE_DRIVER: 'postgres',
              PARLEY_STORE_POSTGRES_URL: schema.url,
              PARLEY_CLUSTER_ENABLED: 'true',
              PARLEY_CLUSTER_ID: clusterId,
              PARLEY_OBSERVABILITY_DEBUG_API_ENABLE: 'true',
            },
            false,
          ),
        ),
      )),
    );
    await settled(nodes, 30_000);
  } catch (e) {
    await Promise.all(nodes.map((n) => n.stop()));
    await schema.drop();
    throw e;
  }
  const nodeOf = (uid: string): ParleyServer => nodes[crc32(uid) % nodes.length]!;
  return {
    name: 'parley-cluster',
    pid: nodes[0]!.pid,
    nodes,
    durability: `ack after the owner node's group commit is durable in PostgreSQL (${new URL(TEST_POSTGRES_URL).host}, synchronous_commit on)`,
    provisionUsers: (uids) => storeTokens(nodes[0]!.api, uids, 1),
    async createGroup(id, members, publishers) {
      await postJson(nodes[0]!.api, '/channel', { channel_id: id, channel_type: 2, subscribers: [...publishers, ...members] });
    },
    connect(uid: string, deliveries: Deliveries): Promise<Connection> {
      return connectJsonRpc(nodeOf(uid).ws, uid, tokenOf(uid), deliveries);
    },
    prepareOffline: async () => undefined,
    async catchUp(uid, fromUid, expected, sink) {
      const rows = await syncChannel(nodeOf(uid).api, uid, fromUid, (body) => sink.text(body));
      if (rows < expected) throw new Error(`sync of ${uid} returned ${rows} of ${expected} rows`);
    },
    async stop() {
      await Promise.all(nodes.map((n) => n.stop()));
      await schema.drop();
    },
  };
}
