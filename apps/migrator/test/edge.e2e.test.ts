import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readJsonl } from '../src/archive/jsonl.ts';
import { applyPatch } from '../src/prepare/patch.ts';
import type { ExcludedRecord, MappingRecord } from '../src/v2/records.ts';
import { copyDatadir, expected, hasFixture, parleyctl, tempRoot, writePlan } from './helpers.ts';
import { applyMapping, checkConversations, checkMessages, checkTokens, startOn } from './served.ts';

describe.each(['edge-closed', 'edge-crash', 'edge-flushed'])("%s migrates once the blockers' resolution patches are applied", (name) => {
  const present = hasFixture(name);
  const root = tempRoot();
  const plan = writePlan(root, present ? copyDatadir(name, root) : '/nonexistent');
  const resolved = join(root, 'plan-resolved.json');
  const archive = join(root, 'archive');
  const target = join(root, 'target');

  it.runIf(present)(
    'every blocker names its resolution; the patched plan runs all four stages',
    async () => {
      const blocked = await parleyctl(['migrate', 'prepare', '--plan', plan, '--workspace', join(root, 'ws-blocked')]);
      expect(blocked.code).toBe(1);
      expect(blocked.report.status).toBe('blocked');
      for (const b of blocked.report.blockers) {
        expect(b.resolution.patch.length, b.code).toBeGreaterThan(0);
        expect(b.resolution.sentence, b.code).toMatch(/\w+/);
      }
      // the cumulative patches applied one by one give the report's whole patch
      let stepwise = JSON.parse(readFileSync(plan, 'utf8'));
      for (const b of blocked.report.blockers) stepwise = applyPatch(stepwise, b.resolution.patch);
      const patched = applyPatch(JSON.parse(readFileSync(plan, 'utf8')), blocked.report.resolution_patch);
      expect(stepwise).toEqual(patched);
      expect(patched.messages).toEqual({ compact_sequences: true, keep_latest_duplicates: true });
      expect(patched.quarantine.map((q: any) => q.reason).sort()).toEqual([
        'message_id_clash',
        'unresolved_allowlist_channel',
        'unresolved_allowlist_channel',
      ]);
      writeFileSync(resolved, JSON.stringify(patched, null, 2));

      const prep = await parleyctl(['migrate', 'prepare', '--plan', resolved, '--workspace', join(root, 'ws')]);
      expect(prep.code, prep.stdout.slice(0, 3000)).toBe(0);
      expect(prep.report.excluded).toEqual({
        keep_latest_duplicates: 1,
        'quarantine:message_id_clash': 1,
        'quarantine:unresolved_allowlist_channel': 2,
      });
      expect(prep.report.sequence_mapping.mapping.count).toBe(480);
      const stages: Array<[string, string[]]> = [
        ['export', ['--workspace', join(root, 'ws'), '--archive', archive]],
        ['import', ['--workspace', join(root, 'ws-import'), '--archive', archive]],
        ['verify', ['--workspace', join(root, 'ws-verify'), '--archive', archive]],
      ];
      for (const [stage, args] of stages) {
        const r = await parleyctl(['migrate', stage, '--plan', resolved, ...args]);
        expect(r.code, `${stage}: ${r.stdout.slice(0, 3000)}`).toBe(0);
        if (stage === 'verify') {
          expect(r.report.status).toBe('offline_verified');
          expect(r.report.verified_message_replicas).toBe(478);
        }
      }
    },
    120_000,
  );

  it.runIf(present)(
    'the server serves what expected.json says, the renumbered channels as the mapping says',
    async () => {
      const exp = expected(name);
      const mapping = [...readJsonl<MappingRecord>(join(archive, 'records', 'sequence_mapping.jsonl'))];
      // only the channels a left-out row was in are renumbered; every other channel keeps its seqs
      const moved = new Set(mapping.filter((m) => m.target_seq !== m.v2_seq).map((m) => m.v2_channel_id));
      expect([...moved].sort()).toEqual(['group01', 'group02']);
      const g1 = mapping.filter((m) => m.v2_channel_id === 'group01');
      expect(g1.find((m) => m.v2_seq === 23)).toMatchObject({ target_seq: 0, boundary_seq: 22 });
      expect(g1.find((m) => m.v2_seq === 24)).toMatchObject({ target_seq: 23, boundary_seq: 23 });
      // the rows left out stay complete in the archive
      const excluded = [...readJsonl<ExcludedRecord>(join(archive, 'records', 'excluded.jsonl'))];
      const clash = excluded.find((e) => e.reason === 'quarantine:message_id_clash')!;
      expect(clash.record).toMatchObject({ v2_channel_id: 'group02', message_seq: 24, message_id: '2039303699402067968' });
      const original = exp.message_channels
        .find((c: any) => c.channel_id === 'group02')
        .messages.find((m: any) => Number(m.message_seq) === 24);
      expect(clash.record.payload).toBe(original.payload_base64);

      const want = applyMapping(exp, mapping);
      const { server, api, ws } = await startOn(target, 7, 'parley-test');
      try {
        await checkTokens(ws, want);
        expect(await checkMessages(server, api, want)).toBe(478);
        expect(await checkConversations(server, api, want)).toBeGreaterThan(100);
        expect(await server.store.repositories.channels.listMembers('allowonly01', 2, 'allow')).toEqual([]);
      } finally {
        await server.close();
      }
    },
    120_000,
  );
});
