import { describe, expect, it } from 'vitest';
import { alreadyApplied, applyResolution, describeChanges, foldDiff, planDiff, type PatchOp } from './resolution.ts';

const base = () => ({ version: 1, sources: [{ node_id: 1 }], target: { cluster_id: 'c' } });
const q = (key: string, reason: string) => ({ node_id: 1, shard: 4, key, sha256: 'a'.repeat(64), reason });

// The cumulative patches prepare/diagnose print for the edge fixture's four blockers (shape as parleyctl writes them).
const clash: PatchOp[] = [
  { op: 'add', path: '/quarantine', value: [q('AQEB', 'message_id_clash')] },
  { op: 'add', path: '/messages', value: {} },
  { op: 'add', path: '/messages/compact_sequences', value: true },
];
const dup: PatchOp[] = [{ op: 'add', path: '/messages/keep_latest_duplicates', value: true }];
const allow1: PatchOp[] = [{ op: 'add', path: '/quarantine/-', value: q('CAEB1', 'unresolved_allowlist_channel') }];
const allow2: PatchOp[] = [{ op: 'add', path: '/quarantine/-', value: q('CAEB2', 'unresolved_allowlist_channel') }];

const sortQ = (p: any) => ({ ...p, quarantine: [...p.quarantine].sort((a: any, b: any) => (a.key < b.key ? -1 : 1)) });

describe('blocker resolutions applied as plan changes, in any order', () => {
  it('gives the same plan as the whole cumulative patch, whatever order the cards are accepted in', () => {
    const all = applyResolution(base(), [...clash, ...dup, ...allow1, ...allow2]);
    for (const order of [
      [clash, dup, allow1, allow2],
      [allow2, dup, allow1, clash],
      [dup, allow1, clash, allow2],
    ]) {
      const got = order.reduce<unknown>((p, patch) => applyResolution(p, patch), base());
      expect(sortQ(got)).toEqual(sortQ(all));
    }
    expect(all).toMatchObject({ messages: { compact_sequences: true, keep_latest_duplicates: true } });
    expect((all as any).quarantine).toHaveLength(3);
  });

  it('never drops what is there: an object member is merged, a list entry added once', () => {
    const before = { ...base(), messages: { exclude_cmd: true }, quarantine: [q('X', 'message_id_clash')] };
    const after = applyResolution(before, clash) as any;
    expect(after.messages).toEqual({ exclude_cmd: true, compact_sequences: true });
    expect(after.quarantine.map((e: any) => e.key)).toEqual(['X', 'AQEB']);
    expect(applyResolution(after, clash)).toEqual(after);
    expect(alreadyApplied(after, clash)).toBe(true);
    expect(alreadyApplied(before, clash)).toBe(false);
    expect(before.messages).toEqual({ exclude_cmd: true });
  });

  it('describes a patch as its changes, without the empty parents', () => {
    expect(describeChanges(clash)).toEqual([
      { kind: 'entry', path: 'quarantine', entry: q('AQEB', 'message_id_clash') },
      { kind: 'set', path: 'messages.compact_sequences', value: true },
    ]);
    expect(describeChanges(allow1)).toEqual([{ kind: 'entry', path: 'quarantine', entry: q('CAEB1', 'unresolved_allowlist_channel') }]);
  });

  it('diffs two plans by line, folding long unchanged runs', () => {
    const before = base();
    const after = applyResolution(before, dup);
    const d = planDiff(before, after);
    expect(d.filter((l) => l.kind === 'del')).toEqual([]);
    expect(d.filter((l) => l.kind === 'add').map((l) => l.text.trim())).toEqual(['},', '"messages": {', '"keep_latest_duplicates": true']);
    expect(
      d
        .filter((l) => l.kind !== 'del')
        .map((l) => l.text)
        .join('\n'),
    ).toBe(JSON.stringify(after, null, 2));
    const folded = foldDiff(
      planDiff({ a: Array.from({ length: 40 }, (_, i) => i) }, { a: Array.from({ length: 40 }, (_, i) => i), b: 1 }),
      2,
    );
    expect(folded[0]).toEqual({ kind: 'fold', count: expect.any(Number) });
    expect(folded.filter((l) => l.kind === 'add')).toHaveLength(2);
  });
});
