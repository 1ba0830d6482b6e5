import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresReachable } from '@parley/store/testing';
import { connectRpc } from '../../../test-support/realtime.ts';
import { get, post, waitFor } from '../../../test-support/http.ts';
import { expected, hasFixture, parleyctl, tempRoot, writePlan } from './helpers.ts';
import {
  CLUSTER3,
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
      expect(marker.cluster).toMatchObject({ cluster_id: c3.clusterId, slot_replica_n: 3, channel_replica_n: 3 });
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

  it('serves the authoritative history from a node on the store; as a three-node cluster the original tokens connect on every node and users on different nodes continue a migrated channel', async () => {
    const exp = expected(CLUSTER3);
    const node1 = structuredClone(exp.nodes['1']);
    const committed = new Map(exp.authoritative.channels.map((c: any) => [`${c.channel_type}:${c.channel_id}`, c]));
    for (const c of node1.message_channels) {
      const a: any = committed.get(`${c.channel_type}:${c.channel_id}`);
      c.messages = c.messages.filter((m: any) => Number(m.message_seq) <= a.committed_last_seq);
    }
    const served: ServedTarget[] = [];
    try {
      const first = await startOn(c3.nodes[0]!.data_dir, 1, c3.clusterId, { url: c3.url, env: c3.nodeEnv(1) });
      served.push(first.server);
      expect(await checkMessages(first.server, first.api, node1)).toBe(exp.authoritative.totals_after_migration.committed_messages);
      for (const a of exp.authoritative.channels) {
        const tail = await first.server.store.repositories.messages.loadTail(v3(a.channel_id, a.channel_type), a.channel_type);
        expect(tail, a.channel_id).toBe(a.committed_last_seq);
      }
      expect(await checkConversations(first.server, first.api, node1)).toBeGreaterThan(50);
      await checkTokens(first.ws, node1);
    } finally {
      for (const s of served.splice(0).reverse()) await s.close();
    }

    // Then the three nodes as one cluster (PostgreSQL and NATS), each on its own data directory with the plan's keys.
    try {
      const started = await Promise.all(
        [1, 2, 3].map((id) =>
          startOn(c3.nodes[id - 1]!.data_dir, id, c3.clusterId, {
            url: c3.url,
            env: { ...c3.nodeEnv(id), PARLEY_CLUSTER_ENABLED: 'true' },
          }),
        ),
      );
      served.push(...started.map((n) => n.server));
      for (const n of started) await waitFor(async () => ((await get(n.api, '/readyz')).status === 200 ? true : undefined), 30_000);
      const creds = cluster3Credentials();
      for (const n of started) {
        for (const c of creds) {
          if (c.banned) {
            await expect(connectRpc(n.ws, c.uid, c.token, c.deviceFlag)).rejects.toThrow(/ReasonBan/);
            continue;
          }
          (await connectRpc(n.ws, c.uid, c.token, c.deviceFlag)).close();
          await expect(connectRpc(n.ws, c.uid, `${c.token}-wrong`, c.deviceFlag)).rejects.toThrow(/connect failed/);
        }
      }
      // Two users of a migrated person channel, on different nodes, continue its history both ways.
      const ok = new Map(creds.filter((c) => !c.banned).map((c) => [c.uid, c]));
      const person = node1.message_channels.find(
        (c: any) => c.channel_type === 1 && c.messages.length > 0 && c.channel_id.split('@').every((u: string) => ok.has(u)),
      );
      expect(person, 'a migrated person channel between two users with tokens').toBeDefined();
      const [a, b] = person.channel_id.split('@').map((u: string) => ok.get(u)!);
      const tail = Number(person.messages.at(-1).message_seq);
      const onA = await connectRpc(started[0]!.ws, a.uid, a.token, a.deviceFlag, `${a.uid}-c3`);
      const onB = await connectRpc(started[2]!.ws, b.uid, b.token, b.deviceFlag, `${b.uid}-c3`);
      try {
        const payload = (text: string) => ({ type: 1, content: text });
        const sent = (await onA.request('send', { clientMsgNo: 'c3-1', channelId: b.uid, channelType: 1, payload: payload('after') }))
          .result as any;
        expect(sent).toMatchObject({ reasonCode: 1, messageSeq: tail + 1 });
        expect((await onB.nextNotification('recv')).params).toMatchObject({
          messageId: sent.messageId,
          messageSeq: tail + 1,
          fromUid: a.uid,
        });
        const reply = (await onB.request('send', { clientMsgNo: 'c3-2', channelId: a.uid, channelType: 1, payload: payload('back') }))
          .result as any;
        expect(reply).toMatchObject({ reasonCode: 1, messageSeq: tail + 2 });
        expect((await onA.nextNotification('recv')).params).toMatchObject({ messageId: reply.messageId, fromUid: b.uid });
        const sync = await post(started[1]!.api, '/channel/messagesync', {
          login_uid: a.uid,
          channel_id: b.uid,
          channel_type: 1,
          start_message_seq: 0,
          end_message_seq: 0,
          limit: 10_000,
          pull_mode: 1,
        });
        expect(sync.json.messages.map((m: any) => m.message_seq)).toEqual(Array.from({ length: tail + 2 }, (_, i) => i + 1));
      } finally {
        onA.close();
        onB.close();
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
