import { describe, expect, it } from 'vitest';
import type { ChecklistDoc, Plan } from '@parley/shared';
import { acceptanceItems, cutoverOpen, preflightItems, progressOf, signOffMarkdown } from './checklist.ts';

const plan = (nodes = 1, messages?: Plan['messages']): Plan => ({
  version: 1,
  sources: [{ node_id: 1, data_dir: '/m/src', shard_count: 8 }],
  target: {
    cluster_id: 'c',
    created_at: '2026-05-01T00:00:00Z',
    slot_count: 12,
    hash_slot_count: 256,
    replicas: nodes,
    channel_replicas: nodes,
    nodes: Array.from({ length: nodes }, (_, i) => ({ node_id: i + 1, addr: `10.0.0.${i}:11110`, data_dir: `/m/t${i}` })),
  },
  ...(messages ? { messages } : {}),
});
const empty = (): ChecklistDoc => ({ version: 1, items: {}, checks: {}, fields: {} });
const at = '2026-05-02T10:00:00.000Z';
const byId = (items: ReturnType<typeof acceptanceItems>) => Object.fromEntries(items.map((i) => [i.id, i]));

describe('the acceptance checklist', () => {
  it('derives which conditional steps apply from the plan', () => {
    const one = byId(acceptanceItems({ plan: plan(), doc: empty(), verified: { ok: false, evidence: [] }, rehearsalOnly: false }));
    expect([one.three_nodes!.applicable, one.renumbering!.applicable, one.cmd_recovery!.applicable]).toEqual([false, false, true]);
    const three = byId(
      acceptanceItems({
        plan: plan(3, { compact_sequences: true, exclude_cmd: true }),
        doc: empty(),
        verified: { ok: false, evidence: [] },
        rehearsalOnly: false,
      }),
    );
    expect([three.three_nodes!.applicable, three.renumbering!.applicable, three.cmd_recovery!.applicable]).toEqual([true, true, false]);
  });

  it('ticks automatic items only by their check, semi-automatic ones by check or person, and opens cutover last', () => {
    const doc = empty();
    doc.items.readyz = { done: true, by: 'x', at }; // a tick does not prove an automatic item
    doc.items.config = { done: true, by: 'Ada', at };
    doc.checks.token = { ok: true, at, evidence: ['node 1: connected'] };
    doc.checks.readyz = { ok: false, at, evidence: ['node 1: 503'] };
    let items = acceptanceItems({
      plan: plan(),
      doc,
      verified: { ok: true, evidence: ['verify: offline_verified'] },
      rehearsalOnly: false,
    });
    const i = byId(items);
    expect([i.readyz!.done, i.config!.done, i.config!.by, i.token!.done, i.token!.by, i.offline_verified!.done]).toEqual([
      false,
      true,
      'person',
      true,
      'proof',
      true,
    ]);
    expect(cutoverOpen(items, false)).toBe(false);
    doc.checks.readyz = { ok: true, at, evidence: ['node 1: 200'] };
    for (const id of ['copy', 'data_agrees', 'new_sequences', 'membership', 'query_restart', 'cmd_recovery', 'cutover'])
      doc.items[id] = { done: true, by: 'Ada', at };
    items = acceptanceItems({ plan: plan(), doc, verified: { ok: true, evidence: [] }, rehearsalOnly: false });
    expect(cutoverOpen(items, false)).toBe(true);
    expect(byId(items).cutover!.done).toBe(true);
    expect(progressOf(items)).toEqual({ done: 11, total: 11 });
    // a rehearsal-only backup keeps cutover closed whatever was ticked
    const rehearsal = acceptanceItems({ plan: plan(), doc, verified: { ok: true, evidence: [] }, rehearsalOnly: true });
    expect(cutoverOpen(rehearsal, true)).toBe(false);
    expect(byId(rehearsal).cutover!.done).toBe(false);
  });

  it('exports a Markdown sign-off with who, when and the evidence of every item', () => {
    const doc = empty();
    doc.items.copy = { done: true, by: 'Ada *Ops*', at, note: 'rsync | dry-run clean' };
    doc.checks.readyz = { ok: true, at, evidence: ['node 1 (http://10.0.0.1:5001): /readyz 200'] };
    const items = acceptanceItems({ plan: plan(), doc, verified: { ok: false, evidence: [] }, rehearsalOnly: false });
    const md = signOffMarkdown(items, {
      title: 'Sign-off plan-1',
      meta: [['Plan', 'plan-1']],
      itemsHeading: 'Items',
      itemLabel: (i) => `label ${i.id}`,
      itemState: (i) => (i.tick ? `ticked by ${i.tick.by}` : i.done ? 'proven' : i.applicable ? 'open' : 'n/a'),
      sections: [{ heading: 'Rollback', lines: ['restore v2'] }],
    });
    expect(md).toContain('# Sign-off plan-1');
    expect(md).toContain('- [x] **1.** label copy — ticked by Ada \\*Ops\\*');
    expect(md).toContain('  - rsync \\| dry-run clean');
    expect(md).toContain('- [x] **3a.** label readyz — proven');
    expect(md).toContain('  - `node 1 (http://10.0.0.1:5001): /readyz 200`');
    expect(md).toContain('- [-] **4.** label three\\_nodes — n/a');
    expect(md).toContain('- [ ] **7.** label cutover — open');
    expect(md.trimEnd().endsWith('- restore v2')).toBe(true);
  });
});

describe('the preflight', () => {
  it('has the seed’s preconditions and the two parleyctl proofs', () => {
    const doc = empty();
    doc.checks.sources = { ok: true, at, evidence: [] };
    const items = preflightItems(doc);
    expect(items.map((i) => i.id)).toContain('v3_new_empty');
    expect(items.filter((i) => i.kind === 'auto').map((i) => [i.id, i.done])).toEqual([
      ['tool', false],
      ['sources', true],
    ]);
  });
});
