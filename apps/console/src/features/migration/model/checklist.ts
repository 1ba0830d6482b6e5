import type { ChecklistDoc, CheckResult, ItemState, Plan } from '@parley/shared';

/**
 * The acceptance checklist (seed 001, "Deployment and acceptance steps") and
 * the preflight (its preconditions) as lists of items. An item is proven by
 * a report, by a live check the host ran and recorded, or ticked by a person
 * with a name and a time; some apply only to some plans.
 */

export type ItemKind = 'report' | 'auto' | 'semi' | 'manual' | 'conditional' | 'gated';

export interface Item {
  id: string;
  /** The seed's deployment step (`3a`), shown beside an acceptance item; empty for preflight items. */
  step: string;
  kind: ItemKind;
  /** The live check that proves it, for `auto` and `semi` items. */
  check?: 'readyz' | 'config' | 'token' | 'tool' | 'sources';
  applicable: boolean;
  done: boolean;
  /** How it was done: by the proof or by a person. */
  by?: 'proof' | 'person';
  tick?: ItemState;
  result?: CheckResult;
  /** Report-proven evidence lines. */
  evidence?: string[];
}

export interface AcceptanceInput {
  plan: Plan;
  doc: ChecklistDoc;
  /** Verify reported offline_verified and every cross-report check passed. */
  verified: { ok: boolean; evidence: string[] };
  /** Preflight said this backup is rehearsal-only (seed rule 7). */
  rehearsalOnly: boolean;
}

const ticked = (doc: ChecklistDoc, id: string) => doc.items[id]?.done === true;

function item(doc: ChecklistDoc, id: string, step: string, kind: ItemKind, applicable = true, check?: Item['check']): Item {
  const result = check ? doc.checks[check] : undefined;
  const proven = result?.ok === true;
  const person = kind !== 'auto' && ticked(doc, id);
  const it: Item = { id, step, kind, applicable, done: applicable && (proven || person) };
  if (check) it.check = check;
  if (result) it.result = result;
  if (doc.items[id]) it.tick = doc.items[id];
  if (it.done) it.by = proven ? 'proof' : 'person';
  return it;
}

export function acceptanceItems(a: AcceptanceInput): Item[] {
  const { plan, doc } = a;
  const m = plan.messages ?? {};
  const items: Item[] = [
    {
      id: 'offline_verified',
      step: '0',
      kind: 'report',
      applicable: true,
      done: a.verified.ok,
      evidence: a.verified.evidence,
      ...(a.verified.ok ? { by: 'proof' as const } : {}),
    },
    item(doc, 'copy', '1', 'manual'),
    item(doc, 'config', '2', 'semi', true, 'config'),
    item(doc, 'readyz', '3a', 'auto', true, 'readyz'),
    item(doc, 'token', '3b', 'auto', true, 'token'),
    item(doc, 'data_agrees', '3c', 'manual'),
    item(doc, 'new_sequences', '3d', 'manual'),
    item(doc, 'membership', '3e', 'manual'),
    item(doc, 'query_restart', '3f', 'manual'),
    item(doc, 'three_nodes', '4', 'conditional', plan.target.nodes.length >= 3 && plan.target.replicas >= 3),
    item(doc, 'renumbering', '5', 'conditional', m.compact_sequences === true),
    item(doc, 'cmd_recovery', '6', 'conditional', m.exclude_cmd !== true),
  ];
  const ready = items.every((i) => !i.applicable || i.done) && !a.rehearsalOnly;
  const cutover = item(doc, 'cutover', '7', 'gated');
  cutover.done = ready && cutover.done;
  items.push(cutover);
  return items;
}

/** The cutover item may be ticked: every other applicable item is done and the backup is not rehearsal-only. */
export function cutoverOpen(items: readonly Item[], rehearsalOnly: boolean): boolean {
  return !rehearsalOnly && items.filter((i) => i.id !== 'cutover').every((i) => !i.applicable || i.done);
}

export function preflightItems(doc: ChecklistDoc): Item[] {
  return [
    item(doc, 'writers_stopped', '', 'manual'),
    item(doc, 'auto_restart_off', '', 'manual'),
    item(doc, 'v3_new_empty', '', 'manual'),
    item(doc, 'baseline', '', 'manual'),
    item(doc, 'space_sized', '', 'manual'),
    item(doc, 'os_locking', '', 'manual'),
    item(doc, 'plugins_match', '', 'manual'),
    item(doc, 'tool', '', 'auto', true, 'tool'),
    item(doc, 'sources', '', 'auto', true, 'sources'),
  ];
}

export const progressOf = (items: readonly Item[]) => ({
  done: items.filter((i) => i.applicable && i.done).length,
  total: items.filter((i) => i.applicable).length,
});

/** What a Markdown sign-off needs besides the items: the words, in the console's language. */
export interface SignOffText {
  title: string;
  meta: Array<[string, string]>;
  sections: Array<{ heading: string; lines: string[] }>;
  itemLabel: (i: Item) => string;
  itemState: (i: Item) => string;
  itemsHeading: string;
}

const esc = (s: string) => s.replace(/([\\`*_[\]<>|])/g, '\\$1');

/** The checklist as a Markdown change record: one line per item with who, when and the evidence. */
export function signOffMarkdown(items: readonly Item[], text: SignOffText): string {
  const out = [`# ${esc(text.title)}`, ''];
  for (const [k, v] of text.meta) out.push(`- **${esc(k)}:** ${esc(v)}`);
  out.push('', `## ${esc(text.itemsHeading)}`, '');
  for (const i of items) {
    const box = !i.applicable ? '[-]' : i.done ? '[x]' : '[ ]';
    out.push(`- ${box} **${i.step}.** ${esc(text.itemLabel(i))} — ${esc(text.itemState(i))}`);
    if (i.tick?.note) out.push(`  - ${esc(i.tick.note)}`);
    for (const e of i.result?.evidence ?? i.evidence ?? []) out.push(`  - \`${e.replace(/`/g, "'")}\``);
  }
  for (const s of text.sections) {
    out.push('', `## ${esc(s.heading)}`, '');
    for (const l of s.lines) out.push(`- ${esc(l)}`);
  }
  return `${out.join('\n')}\n`;
}
