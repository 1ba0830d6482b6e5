/**
 * A Parley cluster of real `parley start` processes on loopback, sharing the
 * test PostgreSQL (a schema of its own, dropped by `stop`) and the local NATS
 * (a cluster id of its own). Used by the cluster tests and the bench.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createTestSchema, type TestSchema } from '@parley/store/testing';
import { get } from './http.ts';
import { spawnServer, tempDir, testEnv, type SpawnedServer, type StartOptions } from './parley.ts';

export interface ClusterNode {
  id: number;
  dataDir: string;
  server: SpawnedServer;
}

export interface TestCluster {
  clusterId: string;
  schema: TestSchema;
  nodes: Map<number, ClusterNode>;
  /** Starts node `id` (again, after a kill, on the same data dir). */
  start(id: number): Promise<ClusterNode>;
  /** `/debug/cluster` of node `id`. */
  debug(id: number): Promise<any>;
  /** Resolves once every running node is ready, sees all running nodes live and every slot has a live owner. */
  settled(timeoutMs?: number): Promise<void>;
  /** Resolves once every slot has a live owner other than node `id` (as the lowest other running node sees it). */
  settledWithout(id: number, timeoutMs?: number): Promise<void>;
  /** Resolves once the slots are spread evenly over the running nodes (as node `via` sees it); the holdings by node id. */
  balanced(via: number, timeoutMs?: number): Promise<Map<number, number>>;
  /** Stops every node (SIGTERM), drops the schema, removes the data dirs. */
  stop(): Promise<void>;
}

export interface ClusterOptions extends StartOptions {
  nodes: number;
  slotCount?: number;
  /** Further env for every node (`PARLEY_*`). */
  env?: Record<string, string>;
  /** PostgreSQL session settings for every node's connections (`-c name=value` in the URL's `options`). */
  pgSettings?: Record<string, string>;
}

/** `url` with `-c name=value` settings added to its `options`. */
function withSettings(url: string, settings: Record<string, string>): string {
  const u = new URL(url);
  const extra = Object.entries(settings).map(([k, v]) => `-c ${k}=${v}`);
  u.searchParams.set('options', [u.searchParams.get('options') ?? '', ...extra].join(' ').trim());
  return u.href;
}

/** Starts `nodes` cluster nodes (ids 1..n) in parallel and waits until they settle. */
export async function startCluster(options: ClusterOptions): Promise<TestCluster> {
  const clusterId = `t${randomBytes(5).toString('hex')}`;
  const schema = createTestSchema('parley_cluster');
  const nodes = new Map<number, ClusterNode>();
  const dirs = new Map<number, string>();
  const envOf = (id: number, dataDir: string) =>
    testEnv(dataDir, {
      PARLEY_NODE_ID: String(id),
      PARLEY_STORE_DRIVER: 'postgres',
      PARLEY_STORE_POSTGRES_URL: options.pgSettings ? withSettings(schema.url, options.pgSettings) : schema.url,
      PARLEY_CLUSTER_ENABLED: 'true',
      PARLEY_CLUSTER_ID: clusterId,
      PARLEY_CLUSTER_INITIAL_SLOT_COUNT: String(options.slotCount ?? 12),
      PARLEY_OBSERVABILITY_DEBUG_API_ENABLE: 'true',
      ...options.env,
    });

  const cluster: TestCluster = {
    clusterId,
    schema,
    nodes,
    async start(id) {
      let dataDir = dirs.get(id);
      if (!dataDir) {
        dataDir = tempDir(`parley-cluster-${id}-`);
        dirs.set(id, dataDir);
      }
      const server = await spawnServer(envOf(id, dataDir), options);
      const node = { id, dataDir, server };
      nodes.set(id, node);
      return node;
    },
    async debug(id) {
      const r = await get(nodes.get(id)!.server.api, '/debug/cluster');
      if (r.status !== 200) throw new Error(`/debug/cluster of node ${id}: ${r.status} ${r.text}`);
      return r.json;
    },
    async settled(timeoutMs = 20_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const running = [...nodes.values()].filter((n) => n.server.proc.exitCode === null && n.server.proc.signalCode === null);
        const ids = running.map((n) => n.id).sort((a, b) => a - b);
        const views = await Promise.all(running.map((n) => cluster.debug(n.id).catch(() => undefined)));
        const ready = await Promise.all(
          running.map((n) =>
            get(n.server.api, '/readyz').then(
              (r) => r.status === 200,
              () => false,
            ),
          ),
        );
        const ok = views.every(
          (v, i) =>
            v &&
            ready[i] &&
            JSON.stringify(v.nodes.map((x: { node_id: number }) => x.node_id)) === JSON.stringify(ids) &&
            v.slots.every((s: { leader_id: number }) => ids.includes(s.leader_id)),
        );
        if (ok) return;
        if (Date.now() > until)
          throw new Error(`cluster did not settle: ${JSON.stringify(views.map((v) => v && { nodes: v.nodes, slots: v.slots }))}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async settledWithout(id, timeoutMs = 20_000) {
      const via = [...nodes.keys()].filter((n) => n !== id).sort((a, b) => a - b)[0]!;
      const until = Date.now() + timeoutMs;
      for (;;) {
        const d = await cluster.debug(via);
        if (d.slots.every((s: { leader_id: number }) => s.leader_id !== 0 && s.leader_id !== id)) return;
        if (Date.now() > until) throw new Error(`node ${id}'s slots were not taken over: ${JSON.stringify(d.slots)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async balanced(via, timeoutMs = 20_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const running = [...nodes.values()].filter((n) => n.server.proc.exitCode === null && n.server.proc.signalCode === null);
        const d = await cluster.debug(via);
        const held = new Map(running.map((n) => [n.id, 0]));
        for (const s of d.slots as Array<{ leader_id: number }>) held.set(s.leader_id, (held.get(s.leader_id) ?? 0) + 1);
        const floor = Math.floor(d.slots.length / running.length);
        const ceil = Math.ceil(d.slots.length / running.length);
        if (held.size === running.length && [...held.values()].every((h) => h >= floor && h <= ceil)) {
          return new Map([...held].sort(([a], [b]) => a - b));
        }
        if (Date.now() > until) throw new Error(`slots not balanced: ${JSON.stringify([...held])}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async stop() {
      await Promise.all([...nodes.values()].map((n) => n.server.stop()));
      await schema.drop();
      for (const dir of dirs.values()) rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await Promise.all(Array.from({ length: options.nodes }, (_, i) => cluster.start(i + 1)));
    await cluster.settled();
  } catch (err) {
    await cluster.stop().catch(() => undefined);
    throw err;
  }
  return cluster;
}
