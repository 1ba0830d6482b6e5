import { DEFAULT_SLOT_COUNT, HASH_SLOT_COUNT, planIssues, type PlanIssue } from '@parley/shared';
import { segments } from './resolution.ts';

/**
 * The plan editor's document: one JSON value both views edit. The form
 * reads and writes members by JSON Pointer, and every problem planIssues
 * finds is shown at the member its pointer names (or above the form when no
 * field shows that member).
 */

type Obj = Record<string, unknown>;

export function getAt(doc: unknown, pointer: string): unknown {
  let at: unknown = doc;
  for (const s of segments(pointer)) {
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Obj)[s];
  }
  return at;
}

/** A copy of `doc` with the member at `pointer` set (parents made as needed); `undefined` removes it. */
export function setAt(doc: unknown, pointer: string, value: unknown): unknown {
  const segs = segments(pointer);
  const root = (structuredClone(doc ?? {}) as Obj) ?? {};
  let at: Obj = root;
  for (const [i, s] of segs.slice(0, -1).entries()) {
    if (at[s] === null || typeof at[s] !== 'object') at[s] = /^\d+$/.test(segs[i + 1]!) ? [] : {};
    at = at[s] as Obj;
  }
  const last = segs.at(-1)!;
  if (value === undefined) {
    if (Array.isArray(at)) at.splice(Number(last), 1);
    else delete at[last];
  } else at[last] = value;
  return root;
}

/** A new plan: today's `created_at`, the default slot count written out, one source and one target node to fill in. */
export function newPlan(root: string | null, now = new Date()): Obj {
  return {
    version: 1,
    sources: [{ node_id: 1, data_dir: '', shard_count: 16 }],
    target: {
      cluster_id: '',
      created_at: now.toISOString().replace(/\.\d+Z$/, 'Z'),
      slot_count: DEFAULT_SLOT_COUNT,
      hash_slot_count: HASH_SLOT_COUNT,
      replicas: 1,
      channel_replicas: 1,
      nodes: [{ node_id: 1, addr: '', data_dir: root ? `${root}/targets/node-1` : '' }],
    },
  };
}

export interface Validation {
  /** The text does not parse as JSON (JSON view only): the parser's message. */
  parseError?: string;
  issues: PlanIssue[];
}

export function validate(doc: unknown): Validation {
  return { issues: planIssues(doc) };
}

/** Problems at exactly this member. */
export function issuesAt(v: Validation, pointer: string): PlanIssue[] {
  return v.issues.filter((i) => i.pointer === pointer);
}

/** Members the form shows a field for: problems elsewhere are listed above the form. */
export function formPointer(pointer: string): boolean {
  return (
    /^\/sources\/\d+\/(node_id|data_dir|shard_count)$/.test(pointer) ||
    /^\/target\/(cluster_id|created_at|slot_count|hash_slot_count|replicas|channel_replicas)$/.test(pointer) ||
    /^\/target\/nodes\/\d+\/(node_id|addr|data_dir)$/.test(pointer) ||
    /^\/messages\/\w+$/.test(pointer) ||
    /^\/exclusions\/\w+$/.test(pointer) ||
    /^\/metadata\/(conversation_list_limit|preserve_all_conversations|derive_unread_from_boundaries)$/.test(pointer)
  );
}

/** Pretty JSON as saved; the JSON view shows exactly this. */
export const planText = (doc: unknown) => `${JSON.stringify(doc, null, 2)}\n`;

/** The JSON view's text as a document, or why it is not JSON. */
export function parsePlanText(text: string): { doc: unknown } | { error: string } {
  try {
    return { doc: JSON.parse(text) as unknown };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

const toml = (v: unknown) => (typeof v === 'string' ? JSON.stringify(v) : String(v));

/**
 * The startup settings of one target node that must equal the plan (seed 001,
 * deployment step 2), as Parley's TOML. Parley runs one node per cluster in
 * this release, so `cluster.nodes` has no key: the plan's `addr` is shown as a
 * comment for the record.
 */
export function startupConfig(plan: unknown, index: number): string {
  const t = (getAt(plan, '/target') ?? {}) as Obj;
  const n = (getAt(plan, `/target/nodes/${index}`) ?? {}) as Obj;
  return [
    `# target node ${toml(n.node_id)}, cluster address ${toml(n.addr)}`,
    '[node]',
    `id = ${toml(n.node_id)}`,
    `data_dir = ${toml(n.data_dir)}`,
    '',
    '[cluster]',
    `id = ${toml(t.cluster_id)}`,
    `initial_slot_count = ${toml(t.slot_count)}`,
    `hash_slot_count = ${toml(t.hash_slot_count)}`,
    `slot_replica_n = ${toml(t.replicas)}`,
    `channel_replica_n = ${toml(t.channel_replicas)}`,
    '',
  ].join('\n');
}

/** The plan policies that change data (they need an explicit acknowledgement before the form turns them on). */
export const DATA_CHANGING = [
  '/messages/keep_latest_duplicates',
  '/messages/resolve_duplicate_chains',
  '/messages/compact_sequences',
  '/messages/exclude_cmd',
  '/messages/exclude_streams',
  '/exclusions/legacy_stream_storage',
  '/metadata/preserve_all_conversations',
  '/metadata/derive_unread_from_boundaries',
] as const;
