import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openStoreReader, type StoreReader } from '@parley/store';
import { describe, expect, it } from 'vitest';
import { readJsonl } from '../src/archive/jsonl.ts';
import type { ExcludedRecord } from '../src/v2/records.ts';
import { copyDatadir, expected, hasFixture, tempRoot, writePlan } from './helpers.ts';
import { checkConversations, startOn } from './served.ts';
import { rowsOf } from './store-rows.ts';
import { editedPlan, exportArchive, importArchive, patchedPlan, prepare, verify } from './stage-helpers.ts';

const BASIC = 'basic-flushed';

/** A fixture copy with a default plan in a fresh root. */
function setup(name = BASIC) {
  const root = tempRoot();
  const plan = writePlan(root, copyDatadir(name, root));
  return { root, plan };
}

/** prepare → export → import → verify in-process; every stage must succeed. */
async function migrate(root: string, plan: string) {
  const p = await prepare(plan, join(root, 'ws'));
  expect(p.code, JSON.stringify(p.report.errors.length ? p.report.errors : p.report.blockers).slice(0, 2000)).toBe(0);
  expect((await exportArchive(plan, join(root, 'ws'), join(root, 'archive'))).code).toBe(0);
  const i = await importArchive(plan, join(root, 'ws-import'), join(root, 'archive'));
  expect(i.code, JSON.stringify(i.report.errors)).toBe(0);
  const v = await verify(plan, join(root, 'ws-verify'), join(root, 'archive'));
  expect(v.code, JSON.stringify(v.report.errors.concat(v.report.mismatches as never[])).slice(0, 2000)).toBe(0);
  return { prepare: p.report, import: i.report, verify: v.report, target: join(root, 'target') };
}

/** Reads the imported target through the store (read-only), then closes it. */
async function readTarget<T>(dir: string, read: (store: StoreReader) => Promise<T>): Promise<T> {
  const store = await openStoreReader(dir);
  try {
    return await read(store);
  } finally {
    await store.close();
  }
}

const present = hasFixture(BASIC);

describe.runIf(present)('message policies on basic data', () => {
  it('exclude_cmd: command logs and command conversations stay in the archive only; no gaps, so no renumbering is needed', async () => {
    const { root, plan } = setup();
    const p = editedPlan(plan, (x) => (x.messages = { exclude_cmd: true }));
    const r = await migrate(root, p);
    expect(r.prepare.excluded).toEqual({ exclude_cmd: 8 + 22 });
    const excluded = [...readJsonl<ExcludedRecord>(join(root, 'archive', 'records', 'excluded.jsonl'))];
    expect(
      excluded
        .filter((e) => e.kind === 'message')
        .every((e) => String(e.record.channel_id).endsWith('____cmd') && typeof e.record.payload === 'string'),
    ).toBe(true);
    await readTarget(r.target, async (store) => {
      expect((await rowsOf(store, 'messages')).filter((m) => m.channel_id.endsWith('____cmd'))).toEqual([]);
      expect(await store.snapshot.count('cmd_bindings')).toBe(0);
      // without renumbering the command logs keep their tails: new commands are numbered above them
      expect((await rowsOf(store, 'channel_log')).find((l) => l.channel_id === 'group01____cmd')?.tail_seq).toBe(5);
    });
  }, 60_000);

  it('exclude_streams: blocks without compact_sequences (its resolution adds it); with it the stream messages leave and the channel is renumbered', async () => {
    const { root, plan } = setup();
    const p = editedPlan(plan, (x) => (x.messages = { exclude_streams: true }));
    const blocked = await prepare(p, join(root, 'ws-blocked'));
    expect(blocked.report.status).toBe('blocked');
    expect(blocked.report.blockers.map((b) => [b.code, b.channel_id])).toEqual([['sequence_gap', 'group09']]);
    expect(blocked.report.resolution_patch).toEqual([{ op: 'add', path: '/messages/compact_sequences', value: true }]);
    const fixed = patchedPlan(p, blocked.report.resolution_patch!);
    const r = await migrate(root, fixed);
    expect(r.prepare.excluded).toEqual({ exclude_streams: 2 });
    const exp = expected(BASIC);
    const g9 = exp.message_channels.find((c: any) => c.channel_id === 'group09');
    const kept = g9.messages.filter((m: any) => (m.setting & 2) === 0).map((m: any) => m.message_id);
    const rows = await readTarget(r.target, async (store) => (await rowsOf(store, 'messages')).filter((m) => m.channel_id === 'group09'));
    expect(rows.map((x) => String(x.message_id))).toEqual(kept);
    expect(rows.map((x) => x.message_seq)).toEqual(kept.map((_: string, i: number) => i + 1));
  }, 60_000);

  it('derive_unread_from_boundaries: targets carry no stored unread count; the originals are reported as archived_unread', async () => {
    const { root, plan } = setup();
    const p = editedPlan(plan, (x) => (x.metadata = { derive_unread_from_boundaries: true }));
    const r = await migrate(root, p);
    const exp = expected(BASIC);
    const stored = exp.users.flatMap((u: any) => u.conversations).filter((c: any) => c.type === 0 && c.unread_count !== 0).length;
    expect(stored).toBeGreaterThan(0);
    expect(r.prepare.archived_unread).toBe(stored);
    expect(r.import.archived_unread).toBe(stored);
    const unread = await readTarget(r.target, async (store) => (await rowsOf(store, 'memberships')).filter((m) => m.unread_count !== 0));
    expect(unread).toEqual([]);
  }, 60_000);

  it("missing_conversations: the warning's patch keeps a membership v2 shows no conversation for visible; a wrong entry stops the run", async () => {
    const { root, plan } = setup();
    const first = await prepare(plan, join(root, 'ws-first'));
    const w = first.report.warnings.find((x) => x.code === 'missing_conversation')!;
    expect([w.uid, w.channel_id]).toEqual(['user02', 'group07']);
    expect(first.report.hidden_memberships).toBe(1);
    const visible = patchedPlan(plan, w.resolution!.patch, 'plan-visible.json');
    const r = await migrate(root, visible);
    expect(r.prepare.hidden_memberships).toBe(0);
    expect(r.import.hidden_memberships).toBe(0);
    const m = await readTarget(r.target, (store) => store.repositories.memberships.get('group07', 2, 'user02'));
    expect(m).toMatchObject({ deletedToSeq: 0, removed: false });
    const elsewhere = (x: any) => (x.target.nodes[0].data_dir = join(root, 'target-2'));
    const wrong = editedPlan(
      visible,
      (x) => {
        elsewhere(x);
        x.metadata.missing_conversations[0].retained_tail += 1;
      },
      'plan-wrong.json',
    );
    expect((await prepare(wrong, join(root, 'ws-wrong'))).report.errors.join('\n')).toMatch(
      /missing_conversations\[0\]\.retained_tail: \d+, but the retained tail is \d+/,
    );
    const nothing = editedPlan(
      visible,
      (x) => {
        elsewhere(x);
        x.metadata.missing_conversations[0].uid_sha256 = '0'.repeat(64);
      },
      'plan-nothing.json',
    );
    expect((await prepare(nothing, join(root, 'ws-nothing'))).report.errors.join('\n')).toMatch(
      /missing_conversations\[0\]: binds to no live membership/,
    );
  }, 60_000);

  it('refuses what this release cannot carry out, naming the member', async () => {
    const { root, plan } = setup();
    const cases: Array<[(p: any) => void, RegExp]> = [
      [
        (p) => (p.metadata = { conversation_lookup: 'v2_active_slot' }),
        /plan\.metadata\.conversation_lookup: not carried out by this release/,
      ],
      [
        (p) => (p.messages = { resolve_duplicate_chains: true }),
        /plan\.messages\.resolve_duplicate_chains: requires plan\.messages\.keep_latest_duplicates/,
      ],
      [
        (p) => (p.metadata = { conversation_replicas: [{ logical_key: 'x', copies_sha256: '0'.repeat(64), source_node_id: 1 }] }),
        /plan\.metadata\.conversation_replicas: binds to nothing/,
      ],
      [
        (p) => (p.plugin_configs = [{ plugin_no: 'no.such.plugin', source_node_id: 1 }]),
        /plan\.plugin_configs\[0\]: binds to nothing: source node 1 has no plugin "no\.such\.plugin"/,
      ],
      [
        (p) => (p.plugin_nodes = [{ target_node_id: 7, source_node_id: 9 }]),
        /plan\.plugin_nodes\[0\]\.source_node_id: 9 is not a source node/,
      ],
    ];
    for (const [i, [edit, want]] of cases.entries()) {
      const p = editedPlan(plan, edit, `plan-${i}.json`);
      const r = await prepare(p, join(root, `ws-${i}`));
      expect(r.code).toBe(1);
      expect(r.report.errors.join('\n')).toMatch(want);
      expect(existsSync(join(root, `ws-${i}`, 'archive_seal.json'))).toBe(false);
    }
  }, 60_000);

  it('plugins: archived and reported (Parley runs none); a named program is checked and copied into the archive', async () => {
    const { root, plan } = setup();
    const program = join(root, 'ai-example.wkp');
    writeFileSync(program, 'plugin program bytes');
    const sha = (await import('node:crypto')).createHash('sha256').update('plugin program bytes').digest('hex');
    const p = editedPlan(plan, (x) => {
      x.plugin_nodes = [{ target_node_id: 7, source_node_id: 1 }];
      x.plugin_configs = [{ plugin_no: 'wk.plugin.ai-example', source_node_id: 1 }];
      x.plugin_artifacts = [{ node_id: 1, path: program, size: 20, sha256: sha, profile: 'linux-amd64' }];
    });
    const r = await migrate(root, p);
    expect(r.prepare.plugins).toMatchObject({
      hosted: false,
      by_node: [{ node_id: 1, plugins: [{ no: 'wk.plugin.ai-example', name: 'AI Example', version: '0.1.0', status: 1 }] }],
      plugin_nodes: [{ target_node_id: 7, source_node_id: 1, plugins: ['wk.plugin.ai-example'] }],
      plugin_configs: [{ plugin_no: 'wk.plugin.ai-example', source_node_id: 1 }],
      artifacts: [{ node_id: 1, size: 20, sha256: sha, archived_as: 'plugins/node-1/0-ai-example.wkp' }],
    });
    expect(JSON.stringify(r.prepare)).not.toContain('sk-fixture-not-a-secret');
    expect(readFileSync(join(root, 'archive', 'plugins', 'node-1', '0-ai-example.wkp'), 'utf8')).toBe('plugin program bytes');
    const bad = editedPlan(
      p,
      (x) => {
        x.target.nodes[0].data_dir = join(root, 'target-2');
        x.plugin_artifacts[0].sha256 = '0'.repeat(64);
      },
      'plan-bad.json',
    );
    expect((await prepare(bad, join(root, 'ws-bad'))).report.errors.join('\n')).toMatch(
      /plan\.plugin_artifacts\[0\]\.sha256: the file's SHA-256 is /,
    );
  }, 60_000);
});

describe.runIf(hasFixture('edge-closed'))('conversation_list_limit on edge data', () => {
  it('hides conversations beyond the limit as v2 did; /conversation/sync lists what v2 lists with that limit', async () => {
    const { root, plan } = setup('edge-closed');
    const first = await prepare(plan, join(root, 'ws-first'));
    const p = editedPlan(
      patchedPlan(plan, first.report.resolution_patch!),
      (x) => (x.metadata = { conversation_list_limit: 20 }),
      'plan-limit.json',
    );
    const r = await migrate(root, p);
    const beyond = r.import.targets[0]!.derived.beyond_list_limit ?? 0;
    expect(beyond).toBeGreaterThan(0);
    const mapping = [...readJsonl<any>(join(root, 'archive', 'records', 'sequence_mapping.jsonl'))];
    const { applyMapping } = await import('./served.ts');
    const want = applyMapping(expected('edge-closed'), mapping);
    const { server, api } = await startOn(join(root, 'target'), 7, 'parley-test');
    try {
      expect(await checkConversations(server, api, want, () => false, 20)).toBeGreaterThan(100);
    } finally {
      await server.close();
    }
  }, 60_000);
});
