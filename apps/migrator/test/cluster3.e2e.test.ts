import { createHash } from 'node:crypto';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expected, fixtureDir, hasFixture, parleyctl, tempRoot, writePlan } from './helpers.ts';
import { checkConversations, checkMessages, checkTokens, startOn, v3 } from './served.ts';

const NAME = 'cluster3-closed';

describe.runIf(hasFixture(NAME))('cluster3-closed: three source nodes into a one-node target', () => {
  const root = tempRoot();
  const nodes = [1, 2, 3].map((id) => {
    const dir = join(root, `node${id}`);
    cpSync(join(fixtureDir(NAME), 'datadir', `node${id}`), dir, { recursive: true });
    return { node_id: id, data_dir: dir, shard_count: 8 };
  });
  const plan = writePlan(root, nodes[0]!.data_dir, { sources: nodes });
  const archive = join(root, 'archive');
  const target = join(root, 'target');
  const reports: Record<string, any> = {};

  it("refuses a plan that names only some of the cluster's nodes", async () => {
    for (const named of [[nodes[1]!], [nodes[0]!, nodes[2]!]]) {
      const r2 = tempRoot();
      const p = writePlan(r2, named[0]!.data_dir, { sources: named });
      const r = await parleyctl(['migrate', 'prepare', '--plan', p, '--workspace', join(r2, 'ws')]);
      expect(r.code).toBe(1);
      expect(r.report.errors.join('\n')).toMatch(
        /the cluster \(remote\.json version \d+\) has nodes \[1, 2, 3\] but the plan names .*every node must be named/,
      );
    }
  }, 60_000);

  it("chooses the authoritative replicas the fixture's authoritative section names, and migrates", async () => {
    const stages: Array<[string, string[]]> = [
      ['prepare', ['--workspace', join(root, 'ws')]],
      ['export', ['--workspace', join(root, 'ws'), '--archive', archive]],
      ['import', ['--workspace', join(root, 'ws-import'), '--archive', archive]],
      ['verify', ['--workspace', join(root, 'ws-verify'), '--archive', archive]],
    ];
    for (const [stage, args] of stages) {
      const r = await parleyctl(['migrate', stage, '--plan', plan, ...args]);
      expect(r.code, `${stage}: ${r.stdout.slice(0, 3000)}`).toBe(0);
      reports[stage] = r.report;
    }
    const want = expected(NAME).authoritative;
    const got = reports.prepare.authority;
    expect(String(got.topology.remote_json_version)).toBe(want.cluster_config_version);
    expect(got.topology.from_nodes.map(String)).toEqual(want.cluster_config_from_nodes);
    expect(got.slots_in_sync).toBe(want.slots_in_sync_on_all_formal_replicas);
    expect(got.slots_diverging.map((s: any) => [s.slot, s.authoritative_nodes.map(String), s.lagging_nodes.map(String)])).toEqual(
      want.slots_diverging.map((s: any) => [s.slot, s.authoritative_nodes, s.lagging_nodes]),
    );
    const pick = (c: any) => ({
      channel: `${c.channel_id}/${c.channel_type}`,
      slot: c.slot,
      quorum: c.quorum,
      held_by: c.authoritative_config_held_by.map(String),
      stale: c.stale_config_copies_on.map(String),
      conf_version: String(c.authoritative_config.conf_version),
      replicas: c.authoritative_config.replicas.map(String),
      leader: String(c.authoritative_config.leader_id),
      committed: c.committed_last_seq,
      last_id: c.committed_last_message_id,
      last_term: String(c.committed_last_term),
      log_sha: c.committed_log_sha256,
      authoritative: c.authoritative_replicas.map(String),
      lagging: c.lagging_replicas.map((l: any) => [String(l.node), l.last_seq, l.missing_seqs]),
      uncommitted: c.uncommitted_tails.length,
      non_replica: c.non_replica_copies.map((n: any) => String(n.node)),
    });
    expect(got.channels.map(pick).sort((a: any, b: any) => (a.channel < b.channel ? -1 : 1))).toEqual(
      want.channels.map(pick).sort((a: any, b: any) => (a.channel < b.channel ? -1 : 1)),
    );
    expect(got.slot_scoped_row_differences.map((d: any) => [d.kind, d.key, d.slot, d.authoritative_nodes.map(String)])).toEqual(
      want.slot_scoped_row_differences.map((d: any) => [d.kind, d.key, d.slot, d.authoritative_nodes]),
    );
    const totals = want.totals_after_migration;
    expect(reports.prepare.retained_messages).toBe(totals.committed_messages);
    expect(reports.prepare.out.users.count).toBe(totals.user_rows);
    expect(reports.prepare.out.credentials.count).toBe(totals.device_rows);
    expect(reports.prepare.out.conversations.count).toBe(totals.conversation_rows);
    expect(reports.prepare.out.tails.count).toBe(totals.message_channels);
    expect(reports.verify.status).toBe('offline_verified');
    expect(reports.verify.verified_message_replicas).toBe(totals.committed_messages);
  }, 120_000);

  it('serves, channel by channel, the committed history of the authoritative section', async () => {
    const exp = expected(NAME);
    // node 1 is an authoritative replica of every channel and slot: its read-back, cut at the committed seqs, is the answer
    const node1 = structuredClone(exp.nodes['1']);
    const committed = new Map(exp.authoritative.channels.map((c: any) => [`${c.channel_type}:${c.channel_id}`, c]));
    for (const c of node1.message_channels) {
      const a: any = committed.get(`${c.channel_type}:${c.channel_id}`);
      c.messages = c.messages.filter((m: any) => Number(m.message_seq) <= a.committed_last_seq);
      const log = c.messages.map((m: any) => `${m.message_seq}:${m.message_id}:${m.term}\n`).join('');
      expect(createHash('sha256').update(log).digest('hex'), c.channel_id).toBe(a.committed_log_sha256);
    }
    const { server, api, ws } = await startOn(target, 7, 'parley-test');
    try {
      expect(await checkMessages(server, api, node1)).toBe(exp.authoritative.totals_after_migration.committed_messages);
      for (const a of exp.authoritative.channels) {
        const tail = await server.store.repositories.messages.loadTail(v3(a.channel_id, a.channel_type), a.channel_type);
        expect(tail, a.channel_id).toBe(a.committed_last_seq);
      }
      await checkTokens(ws, node1);
      expect(await checkConversations(server, api, node1)).toBeGreaterThan(50);
      const m = await server.store.repositories.memberships.get('team01', 2, 'user01');
      expect(m?.readSeq).toBe(exp.authoritative.slot_scoped_row_differences[0].values_by_node['1'].readed_to_msg_seq * 1);
    } finally {
      await server.close();
    }
  }, 120_000);
});
