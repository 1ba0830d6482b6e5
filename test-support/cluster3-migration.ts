/**
 * The fixture cluster3-closed (three WuKongIM v2 nodes) migrated by the real
 * `parleyctl` into a three-node Parley target on PostgreSQL, for tests of the
 * migrator and of the cluster: start node `id` with
 * `spawnServer(testEnv(target.nodes[id - 1].data_dir, target.nodeEnv(id)))`
 * (add the cluster runtime's own keys, e.g. `PARLEY_CLUSTER_ENABLED`), and
 * connect with `cluster3Credentials()`. `drop()` removes the schema.
 */
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestSchema } from '@parley/store/testing';
import { fixturesPresent, V2_FIXTURES_DIR } from './fixtures.ts';
import { parleyctl } from './parleyctl.ts';

export const CLUSTER3 = 'cluster3-closed';
/** The target's cluster: three nodes, 12 physical slots, every slot and channel on all three (each run gets a cluster id of its own). */
export const CLUSTER3_TARGET = {
  created_at: '2026-05-01T00:00:00Z',
  slot_count: 12,
  hash_slot_count: 256,
  replicas: 3,
  channel_replicas: 3,
} as const;

export interface Cluster3Target {
  /** `cluster.id` of this run's target (its own, so runs sharing one NATS never meet). */
  clusterId: string;
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

/** Whether the fixture is there (false in a plain clone; under CI its absence throws, see fixtures.ts). */
export function cluster3Present(): boolean {
  return fixturesPresent(V2_FIXTURES_DIR);
}

/** `expected.json` of the fixture: its `authoritative` section is what the target must hold. */
export function cluster3Expected(): any {
  return JSON.parse(readFileSync(join(V2_FIXTURES_DIR, CLUSTER3, 'expected.json'), 'utf8'));
}

/** Every device with a token in the fixture; `banned` users are refused (ReasonBan), the others connect. */
export function cluster3Credentials(): Array<{ uid: string; token: string; deviceFlag: number; banned: boolean }> {
  const node1 = cluster3Expected().nodes['1'];
  const banned = new Set(node1.channels.filter((c: any) => c.channel_type === 1 && c.info?.ban).map((c: any) => c.channel_id));
  return node1.users.flatMap((u: any) =>
    u.devices
      .filter((d: any) => d.token !== '')
      .map((d: any) => ({ uid: u.uid, token: d.token, deviceFlag: Number(d.device_flag), banned: banned.has(u.uid) })),
  );
}

export { parleyctl };

/** Copies the fixture's three source nodes, writes the plan and runs every stage; throws with the report of a stage that fails. */
export async function migrateCluster3IntoPostgres(): Promise<Cluster3Target> {
  const root = mkdtempSync(join(tmpdir(), 'parley-c3-'));
  const clusterId = `c3-${randomBytes(5).toString('hex')}`;
  const sources = [1, 2, 3].map((id) => {
    const dir = join(root, `source${id}`);
    cpSync(join(V2_FIXTURES_DIR, CLUSTER3, 'datadir', `node${id}`), dir, { recursive: true });
    return { node_id: id, data_dir: dir, shard_count: 8 };
  });
  const schema = createTestSchema('parley_c3');
  const nodes = [1, 2, 3].map((id) => ({ node_id: id, addr: `127.0.0.1:${11110 + id}`, data_dir: join(root, `parley-${id}`) }));
  const plan = join(root, 'plan.json');
  writeFileSync(
    plan,
    JSON.stringify(
      {
        version: 1,
        sources,
        target: { cluster_id: clusterId, ...CLUSTER3_TARGET, nodes, store: { driver: 'postgres', postgres_url: schema.url } },
      },
      null,
      2,
    ),
  );
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
    clusterId,
    root,
    plan,
    archive,
    url: schema.url,
    schema: schema.schema,
    nodes,
    reports,
    nodeEnv: (id) => ({
      PARLEY_NODE_ID: String(id),
      PARLEY_CLUSTER_ID: clusterId,
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
