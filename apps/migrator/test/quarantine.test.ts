import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openPebble } from '@parley/pebble';
import { aggregateKey, readRawRow } from '../src/prepare/raw-row.ts';
import { channelHash, channelShard } from '../src/v2/hash.ts';
import { copyDatadir, hasFixture, tempRoot, writePlan } from './helpers.ts';
import { diagnose, editedPlan, exportArchive, exportMap, patchedPlan, prepare } from './stage-helpers.ts';

const EDGE = 'edge-closed';

describe.runIf(hasFixture(EDGE) && hasFixture('basic-flushed'))('quarantine[] binding rules', () => {
  const root = tempRoot();
  const source = copyDatadir(EDGE, root);
  const plan = writePlan(root, source);
  let resolved = '';
  let n = 0;
  const run = async (edit: (p: any) => void) => prepare(editedPlan(resolved, edit, `plan-${++n}.json`), join(root, `ws-${n}`));

  it("the trial migration's plan (exclude_cmd, compact_sequences, a made-up quarantine entry) is refused, not accepted and ignored", async () => {
    const r2 = tempRoot();
    const p = writePlan(r2, copyDatadir('basic-flushed', r2), {
      messages: { exclude_cmd: true, compact_sequences: true },
      quarantine: [
        {
          node_id: 1,
          shard: 3,
          key: Buffer.alloc(20, 1)
            .fill(Buffer.of(1, 1, 1, 0), 0, 4)
            .toString('base64'),
          sha256: 'a'.repeat(64),
          reason: 'invalid_message_channel',
        },
      ],
    });
    const r = await prepare(p, join(r2, 'ws'));
    expect(r.code).toBe(1);
    expect(r.report.status).toBe('failed');
    expect(r.report.errors.join('\n')).toMatch(/plan\.quarantine\[0\]: binds to nothing: node 1 shard 3 has no row under key /);
  });

  it('the resolution patch binds; a duplicate entry, a changed hash, a misfit reason or a missing policy stop the run', async () => {
    const first = await prepare(plan, join(root, 'ws-first'));
    resolved = patchedPlan(plan, first.report.resolution_patch!, 'plan-resolved.json');
    expect((await prepare(resolved, join(root, 'ws-ok'))).code).toBe(0);
    const clash = (p: any) => p.quarantine.findIndex((q: any) => q.reason === 'message_id_clash');
    const cases: Array<[(p: any) => void, RegExp]> = [
      [
        (p) => p.quarantine.push({ ...p.quarantine[0] }),
        /plan\.quarantine\[3\]: duplicate entry \(plan\.quarantine\[0\] binds the same row\)/,
      ],
      [(p) => (p.quarantine[0].sha256 = 'b'.repeat(64)), /plan\.quarantine\[0\]\.sha256: the row's SHA-256 is [0-9a-f]{64}/],
      [
        (p) => (p.quarantine[clash(p)].reason = 'invalid_message_channel'),
        /\.reason: invalid_message_channel does not fit this row: its key hash is the hash of its ChannelId column/,
      ],
      [(p) => (p.quarantine[clash(p)].reason = 'unresolved_allowlist_channel'), /\.key: not the aggregate key of an allowlist row/],
      [(p) => delete p.messages.compact_sequences, /quarantining a message \(message_id_clash\) requires messages\.compact_sequences/],
      [(p) => (p.quarantine[0].node_id = 2), /plan\.quarantine\[0\]\.node_id: 2 is not a source node/],
    ];
    for (const [edit, want] of cases) {
      const r = await run(edit);
      expect(r.code).toBe(1);
      expect(r.report.errors.join('\n')).toMatch(want);
    }
  }, 60_000);

  it('an allowlist row whose channel is known does not fit unresolved_allowlist_channel', async () => {
    const ch = channelHash('group08', 2);
    const shard = channelShard(ch, 8);
    const db = openPebble(join(source, 'db', 'wukongimdb', `shard00${shard}`));
    let key: Buffer | undefined;
    let sha = '';
    try {
      for (const uid of ['user01', 'user02', 'user03', 'user04', 'user05', 'user06', 'user07', 'user08']) {
        const k = aggregateKey.member(0x0801, ch, uid);
        const row = readRawRow(db, k);
        if (row) {
          key = k;
          sha = row.sha256;
          break;
        }
      }
    } finally {
      db.close();
    }
    expect(key).toBeDefined();
    const r = await run((p) =>
      p.quarantine.push({ node_id: 1, shard, key: key!.toString('base64'), sha256: sha, reason: 'unresolved_allowlist_channel' }),
    );
    expect(r.code).toBe(1);
    expect(r.report.errors.join('\n')).toMatch(/\.reason: the allowlist row's channel hash [0-9a-f]{16} resolves to a known channel/);
  }, 60_000);

  it('diagnose: the same blockers in a workspace of its own, which prepare refuses; export-map rebuilds the mapping byte for byte', async () => {
    const d = await diagnose(plan, join(root, 'ws-diag'));
    expect(d.code).toBe(1);
    expect(d.report.status).toBe('blocked');
    expect(d.report.complete_scan).toBe(true);
    expect(d.report.blockers.map((b) => b.code).sort()).toEqual([
      'duplicate_client_msg_no',
      'duplicate_message_id',
      'unresolved_allowlist_channel',
      'unresolved_allowlist_channel',
    ]);
    expect(d.report.blockers.every((b) => b.resolution !== undefined && b.resolution.patch.length > 0)).toBe(true);
    const p = await prepare(plan, join(root, 'ws-diag'));
    expect(p.report.errors.join('\n')).toMatch(/already exists \(it is a diagnose workspace\)/);
    const ok = await diagnose(resolved, join(root, 'ws-diag-ok'));
    expect([ok.code, ok.report.status]).toEqual([0, 'diagnosed']);

    expect((await prepare(resolved, join(root, 'ws-map'))).code).toBe(0);
    expect((await exportArchive(resolved, join(root, 'ws-map'), join(root, 'archive'))).code).toBe(0);
    const m = await exportMap(resolved, join(root, 'ws-export-map'), join(root, 'archive'));
    expect(m.code, m.report.errors.join('\n')).toBe(0);
    expect(m.report.matches_archive).toBe(true);
    const { readFileSync } = await import('node:fs');
    expect(readFileSync(join(root, 'ws-export-map', 'sequence_mapping.jsonl'))).toEqual(
      readFileSync(join(root, 'archive', 'records', 'sequence_mapping.jsonl')),
    );
    const none = await exportMap(plan, join(root, 'ws-export-map-2'), join(root, 'archive'));
    expect(none.report.errors.join('\n')).toMatch(/compact_sequences is not set/);
  }, 60_000);

  it('diagnose reads on past a shard it cannot read and says the scan is incomplete (exit 1)', async () => {
    const r2 = tempRoot();
    const copy = copyDatadir('basic-flushed', r2);
    const { readdirSync, renameSync } = await import('node:fs');
    const dir = join(copy, 'db', 'wukongimdb', 'shard005');
    const marker = readdirSync(dir).find((f) => f.startsWith('marker.format-version.'))!;
    renameSync(join(dir, marker), join(dir, marker.replace(/\.\d+$/, '.019')));
    const d = await diagnose(writePlan(r2, copy), join(r2, 'ws'));
    expect(d.code).toBe(1);
    expect(d.report.status).toBe('incomplete');
    expect(d.report.complete_scan).toBe(false);
    expect(d.report.unreadable!.join('\n')).toMatch(/shard 5: .*format major version 19|shard 5: unsupported format/);
    expect(d.report.sources![0]!.keys_read).toBeGreaterThan(1000);
  }, 60_000);
});
