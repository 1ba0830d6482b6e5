import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresReachable } from '@parley/store/testing';
import { connectRpc } from '../../../test-support/realtime.ts';
import { expected, hasFixture, parleyctl, tempRoot, writePlan } from './helpers.ts';
import {
  CLUSTER3,
  CLUSTER3_TARGET,
  cluster3Credentials,
  migrateCluster3IntoPostgres,
  type Cluster3Target,
} from '../../../test-support/cluster3-migration.ts';
import { checkConversations, checkMessages, checkTokens, startOn, v3, type ServedTarget } from './served.ts';

const pgUp = hasFixture(CLUSTER3) ? await postgresReachable() : false;

describe.runIf(hasFixture(CLUSTER3) && pgUp)('cluster3-closed into a three-node target on PostgreSQL', { timeout: 180_000 }, () => {
  let c3: Cluster3Target;
  beforeAll(async () => {
    c3 = await migrateCluster3IntoPostgres();
  }, 180_000);
  afterAll(async () => {
    await c3?.drop();
  });

  it('imports once into the shared schema and gives each node its markers, verified against the store', () => {
    const totals = expected(CLUSTER3).authoritative.totals_after_migration;
    const imp = c3.reports.import;
    expect(imp.status).toBe('imported');
    expect(imp.targets.map((t: any) => t.node_id)).toEqual([1, 2, 3]);
    const sha = imp.targets[0].content_sha256;
    expect(imp.targets.every((t: any) => t.content_sha256 === sha && t.reused === false)).toBe(true);
    expect(imp.targets[0].rows.messages).toBe(totals.committed_messages);
    const where = { driver: 'postgres', host: '127.0.0.1', port: 5432, database: 'test', schema: c3.schema };
    for (const n of c3.nodes) {
      expect(existsSync(join(n.data_dir, 'parley.db'))).toBe(false);
      const marker = JSON.parse(readFileSync(join(n.data_dir, 'migration.json'), 'utf8'));
      expect(marker).toMatchObject({ node_id: n.node_id, content_sha256: sha, store: where });
      expect(marker.cluster).toMatchObject({ cluster_id: CLUSTER3_TARGET.cluster_id, slot_replica_n: 3, channel_replica_n: 3 });
      expect(JSON.parse(readFileSync(join(n.data_dir, 'data-format.json'), 'utf8')).store).toEqual(where);
      expect(readFileSync(join(n.data_dir, 'migration.json'), 'utf8')).not.toMatch(/postgres:\/\//);
    }
    const verify = c3.reports.verify;
    expect(verify.status).toBe('offline_verified');
    expect(verify.mismatches).toEqual([]);
    expect(verify.targets.map((t: any) => [t.node_id, t.content_sha256])).toEqual(c3.nodes.map((n) => [n.node_id, sha]));
    expect(verify.verified_message_replicas).toBe(totals.committed_messages * 3);
  });

  it('a rerun of the same import recognises the finished schema; another plan may not write into it', async () => {
    const again = await parleyctl([
      'migrate',
      'import',
      '--plan',
      c3.plan,
      '--workspace',
      join(c3.root, 'ws-import-2'),
      '--archive',
      c3.archive,
    ]);
    expect(again.code, again.stdout.slice(0, 2000)).toBe(0);
    expect(again.report.targets.map((t: any) => t.reused)).toEqual([true, true, true]);

    const other = tempRoot();
    const plan = JSON.parse(readFileSync(c3.plan, 'utf8'));
    plan.target.nodes = plan.target.nodes.map((n: any) => ({ ...n, data_dir: join(other, `n${n.node_id}`) }));
    plan.target.cluster_id = 'another';
    const otherPlan = writePlan(other, plan.sources[0].data_dir, { sources: plan.sources, target: plan.target });
    const r = await parleyctl(['migrate', 'prepare', '--plan', otherPlan, '--workspace', join(other, 'ws')]);
    expect(r.code, r.stdout.slice(0, 2000)).toBe(0);
    const e = await parleyctl(['migrate', 'export', '--plan', otherPlan, '--workspace', join(other, 'ws'), '--archive', join(other, 'a')]);
    expect(e.code).toBe(0);
    const i = await parleyctl(['migrate', 'import', '--plan', otherPlan, '--workspace', join(other, 'wi'), '--archive', join(other, 'a')]);
    expect(i.code).toBe(1);
    expect(i.report.errors.join('\n')).toMatch(/schema parley_c3_\w+ holds another import/);
    for (const n of plan.target.nodes) expect(existsSync(n.data_dir)).toBe(false);
  });

  it('serves the authoritative history from a real node on the store, and the original tokens connect on every node', async () => {
    const exp = expected(CLUSTER3);
    const node1 = structuredClone(exp.nodes['1']);
    const committed = new Map(exp.authoritative.channels.map((c: any) => [`${c.channel_type}:${c.channel_id}`, c]));
    for (const c of node1.message_channels) {
      const a: any = committed.get(`${c.channel_type}:${c.channel_id}`);
      c.messages = c.messages.filter((m: any) => Number(m.message_seq) <= a.committed_last_seq);
    }
    const served: ServedTarget[] = [];
    try {
      const first = await startOn(c3.nodes[0]!.data_dir, 1, CLUSTER3_TARGET.cluster_id, { url: c3.url, env: c3.nodeEnv(1) });
      served.push(first.server);
      expect(await checkMessages(first.server, first.api, node1)).toBe(exp.authoritative.totals_after_migration.committed_messages);
      for (const a of exp.authoritative.channels) {
        const tail = await first.server.store.repositories.messages.loadTail(v3(a.channel_id, a.channel_type), a.channel_type);
        expect(tail, a.channel_id).toBe(a.committed_last_seq);
      }
      expect(await checkConversations(first.server, first.api, node1)).toBeGreaterThan(50);
      await checkTokens(first.ws, node1);
      // The other two nodes start on the same store with their own data directories and node ids.
      for (const id of [2, 3]) {
        const n = await startOn(c3.nodes[id - 1]!.data_dir, id, CLUSTER3_TARGET.cluster_id, { url: c3.url, env: c3.nodeEnv(id) });
        served.push(n.server);
        for (const c of cluster3Credentials()) {
          if (c.banned) {
            await expect(connectRpc(n.ws, c.uid, c.token, c.deviceFlag)).rejects.toThrow(/ReasonBan/);
            continue;
          }
          (await connectRpc(n.ws, c.uid, c.token, c.deviceFlag)).close();
          await expect(connectRpc(n.ws, c.uid, `${c.token}-wrong`, c.deviceFlag)).rejects.toThrow(/connect failed/);
        }
      }
    } finally {
      for (const s of served.reverse()) await s.close();
    }
    for (const n of c3.nodes) expect(existsSync(join(n.data_dir, 'started.json'))).toBe(true);
    // A started target is never verified again as an initial import.
    const v = await parleyctl([
      'migrate',
      'verify',
      '--plan',
      c3.plan,
      '--workspace',
      join(c3.root, 'ws-verify-2'),
      '--archive',
      c3.archive,
    ]);
    expect(v.code).toBe(1);
    expect(v.report.errors.join('\n')).toMatch(/has been started/);
  });
});
