/**
 * cluster3-closed migrated into a three-node PostgreSQL target, for tests
 * (this workspace's, and the cluster runtime's: start the nodes with
 * `nodeEnv(id)` beside `testEnv(dataDir(id), …)`). Runs prepare, export,
 * import and verify with the real `parleyctl`; `drop()` removes the schema.
 */
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { createTestSchema } from '@parley/store/testing';
import { fixtureDir, parleyctl, tempRoot, writePlan } from './helpers.ts';

export const CLUSTER3 = 'cluster3-closed';
/** The target's cluster: three nodes, 12 physical slots, every slot and channel on all three. */
export const CLUSTER3_TARGET = {
  cluster_id: 'parley-c3',
  created_at: '2026-05-01T00:00:00Z',
  slot_count: 12,
  hash_slot_count: 256,
  replicas: 3,
  channel_replicas: 3,
} as const;

export interface Cluster3Target {
  root: string;
  plan: string;
  archive: string;
  /** The schema's URL (`store.postgres_url` of every node). */
  url: string;
  schema: string;
  nodes: Array<{ node_id: number; addr: string; data_dir: string }>;
  /** Each stage's JSON report. */
  reports: Record<'prepare' | 'export' | 'import' | 'verify', any>;
  /** `PARLEY_*` for node `id`: its node id, the plan's cluster keys and the store (add a data dir and ports with `testEnv`). */
  nodeEnv(id: number): Record<string, string>;
  drop(): Promise<void>;
}

/** Copies the fixture's three source nodes, writes the plan and runs every stage; throws with the report of a stage that fails. */
export async function migrateCluster3IntoPostgres(): Promise<Cluster3Target> {
  const root = tempRoot();
  const sources = [1, 2, 3].map((id) => {
    const dir = join(root, `source${id}`);
    cpSync(join(fixtureDir(CLUSTER3), 'datadir', `node${id}`), dir, { recursive: true });
    return { node_id: id, data_dir: dir, shard_count: 8 };
  });
  const schema = createTestSchema('parley_c3');
  const nodes = [1, 2, 3].map((id) => ({ node_id: id, addr: `127.0.0.1:${11110 + id}`, data_dir: join(root, `parley-${id}`) }));
  const plan = writePlan(root, sources[0]!.data_dir, {
    sources,
    target: { ...CLUSTER3_TARGET, nodes, store: { driver: 'postgres', postgres_url: schema.url } },
  });
  const archive = join(root, 'archive');
  const reports = {} as Cluster3Target['reports'];
  const stages: Array<[keyof Cluster3Target['reports'], string[]]> = [
    ['prepare', ['--workspace', join(root, 'ws')]],
    ['export', ['--workspace', join(root, 'ws'), '--archive', archive]],
    ['import', ['--workspace', join(root, 'ws-import'), '--archive', archive]],
    ['verify', ['--workspace', join(root, 'ws-verify'), '--archive', archive]],
  ];
  try {
    for (const [stage, args] of stages) {
      const r = await parleyctl(['migrate', stage, '--plan', plan, ...args]);
      reports[stage] = r.report;
      if (r.code !== 0)
        throw new Error(`parleyctl migrate ${stage} exited ${r.code}: ${r.stdout.slice(0, 3000)}\n${r.stderr.slice(-2000)}`);
    }
  } catch (err) {
    await schema.drop();
    throw err;
  }
  return {
    root,
    plan,
    archive,
    url: schema.url,
    schema: schema.schema,
    nodes,
    reports,
    nodeEnv: (id) => ({
      PARLEY_NODE_ID: String(id),
      PARLEY_CLUSTER_ID: CLUSTER3_TARGET.cluster_id,
      PARLEY_CLUSTER_INITIAL_SLOT_COUNT: String(CLUSTER3_TARGET.slot_count),
      PARLEY_CLUSTER_SLOT_REPLICA_N: String(CLUSTER3_TARGET.replicas),
      PARLEY_CLUSTER_CHANNEL_REPLICA_N: String(CLUSTER3_TARGET.channel_replicas),
      PARLEY_STORE_DRIVER: 'postgres',
      PARLEY_STORE_POSTGRES_URL: schema.url,
      PARLEY_STORE_POSTGRES_POOL_SIZE: '4',
    }),
    drop: () => schema.drop(),
  };
}
