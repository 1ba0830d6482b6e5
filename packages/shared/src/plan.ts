import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors';
import { Value } from '@sinclair/typebox/value';
import { Plan, SUPPORTED_SOURCE_COMMIT } from './plan.schema.ts';

/** Directories a stage uses besides the plan's own (workspace, archive). */
export interface PlanDirs {
  workspace?: string;
  archive?: string;
}

function where(path: string): string {
  return path === '' ? 'plan' : `plan${path.replace(/\//g, '.').replace(/\.(\d+)/g, '[$1]')}`;
}

/**
 * One problem of a plan: where it is (a JSON Pointer into the plan, `''` for
 * the whole plan, so an editor can mark the field), what is wrong there, and
 * the one-line text `parleyctl` reports.
 */
export interface PlanIssue {
  pointer: string;
  message: string;
  text: string;
  /** What kind of value the member needs, for an editor to say it in its own words (`min`/`max` in `params`). */
  hint?: PlanHint;
  params?: Record<string, number>;
}

export type PlanHint =
  | 'required'
  | 'absolute_path'
  | 'host_port'
  | 'sha256'
  | 'iso8601'
  | 'integer'
  | 'at_least'
  | 'at_most'
  | 'boolean'
  | 'duplicate'
  | 'exceeds_nodes';

function issue(pointer: string, message: string, text = `${where(pointer)}: ${message}`): PlanIssue {
  return { pointer, message, text };
}

/** The editor's hint for a schema error, where it has one. */
function hintOf(e: ValueError): Pick<PlanIssue, 'hint' | 'params'> {
  const schema = e.schema as { pattern?: string; minimum?: number; maximum?: number; minLength?: number };
  switch (e.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return { hint: 'required' };
    case ValueErrorType.StringMinLength:
      return schema.minLength === 1 ? { hint: 'required' } : {};
    case ValueErrorType.StringPattern:
      if (schema.pattern === '^/') return { hint: 'absolute_path' };
      if (schema.pattern?.startsWith('^[0-9a-f]{64}')) return { hint: 'sha256' };
      if (schema.pattern?.includes(':[0-9]{1,5}$')) return { hint: 'host_port' };
      if (schema.pattern?.startsWith('^\\d{4}-')) return { hint: 'iso8601' };
      return {};
    case ValueErrorType.Integer:
    case ValueErrorType.Number:
      return { hint: 'integer' };
    case ValueErrorType.Boolean:
      return { hint: 'boolean' };
    case ValueErrorType.NumberMinimum:
    case ValueErrorType.IntegerMinimum:
      return { hint: 'at_least', params: { min: schema.minimum ?? 0 } };
    case ValueErrorType.NumberMaximum:
    case ValueErrorType.IntegerMaximum:
      return { hint: 'at_most', params: { max: schema.maximum ?? 0 } };
    default:
      return {};
  }
}

/** A JSON Pointer from path segments. */
function ptr(...segments: Array<string | number>): string {
  return segments.map((s) => `/${String(s).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

/** Schema problems, one each; unknown members are named as such. */
function schemaIssues(input: unknown): PlanIssue[] {
  const out: PlanIssue[] = [];
  for (const e of Value.Errors(Plan, input)) {
    if (e.type === ValueErrorType.ObjectAdditionalProperties) {
      const cut = e.path.lastIndexOf('/');
      out.push(issue(e.path.slice(0, cut), `unknown member "${e.path.slice(cut + 1)}" (not supported by this release)`));
      continue;
    }
    if (e.type === ValueErrorType.Union) {
      const options = ((e.schema as { anyOf?: Array<{ const?: unknown }> }).anyOf ?? []).map((o) => o.const);
      const listed = options.every((o) => o !== undefined) ? options.map((o) => JSON.stringify(o)).join(', ') : '';
      out.push(issue(e.path, listed ? `must be one of ${listed}` : e.message));
      continue;
    }
    out.push({ ...issue(e.path, e.message), ...hintOf(e) });
  }
  const seen = new Set<string>();
  return out.filter((i) => !seen.has(i.text) && seen.add(i.text));
}

function normalize(dir: string): string {
  const parts: string[] = [];
  for (const p of dir.split('/')) {
    if (p === '' || p === '.') continue;
    if (p === '..') parts.pop();
    else parts.push(p);
  }
  return `/${parts.join('/')}`;
}

function contains(outer: string, inner: string): boolean {
  return outer === inner || inner.startsWith(outer === '/' ? '/' : `${outer}/`);
}

/** The rules that relate members to each other (node counts, uniqueness, containment). */
function crossIssues(plan: Plan, dirs: PlanDirs): PlanIssue[] {
  const out: PlanIssue[] = [];
  const t = plan.target;
  if (plan.source_commit !== undefined && plan.source_commit !== SUPPORTED_SOURCE_COMMIT) {
    out.push(issue('/source_commit', `unsupported value "${plan.source_commit}" (this release reads only ${SUPPORTED_SOURCE_COMMIT})`));
  }
  if (Number.isNaN(Date.parse(t.created_at))) out.push(issue('/target/created_at', 'not a valid ISO 8601 timestamp'));
  const exceeds = { hint: 'exceeds_nodes' as const, params: { nodes: t.nodes.length } };
  if (t.replicas > t.nodes.length)
    out.push({ ...issue('/target/replicas', `${t.replicas} exceeds the target node count ${t.nodes.length}`), ...exceeds });
  if (t.channel_replicas > t.nodes.length) {
    out.push({ ...issue('/target/channel_replicas', `${t.channel_replicas} exceeds the target node count ${t.nodes.length}`), ...exceeds });
  }
  const dup = <T>(items: T[], field: (i: number) => string, label: string) => {
    const seen = new Set<T>();
    for (const [i, v] of items.entries()) {
      if (seen.has(v))
        out.push({
          ...issue(field(i), `duplicate value ${JSON.stringify(v)}`, `${label}: duplicate value ${JSON.stringify(v)}`),
          hint: 'duplicate',
        });
      seen.add(v);
    }
  };
  dup(
    plan.sources.map((s) => s.node_id),
    (i) => ptr('sources', i, 'node_id'),
    'plan.sources[].node_id',
  );
  dup(
    t.nodes.map((n) => n.node_id),
    (i) => ptr('target', 'nodes', i, 'node_id'),
    'plan.target.nodes[].node_id',
  );
  dup(
    t.nodes.map((n) => n.addr),
    (i) => ptr('target', 'nodes', i, 'addr'),
    'plan.target.nodes[].addr',
  );
  const named: Array<[string, string, string]> = [
    ...plan.sources.map((s, i): [string, string, string] => [`plan.sources[${i}].data_dir`, ptr('sources', i, 'data_dir'), s.data_dir]),
    ...t.nodes.map((n, i): [string, string, string] => [
      `plan.target.nodes[${i}].data_dir`,
      ptr('target', 'nodes', i, 'data_dir'),
      n.data_dir,
    ]),
  ];
  if (dirs.workspace !== undefined) named.push(['--workspace', '', dirs.workspace]);
  if (dirs.archive !== undefined) named.push(['--archive', '', dirs.archive]);
  // A path that is not absolute is already a schema problem; it contains nothing.
  for (let k = named.length - 1; k >= 0; k--) if (typeof named[k]![2] !== 'string' || !named[k]![2].startsWith('/')) named.splice(k, 1);
  for (let i = 0; i < named.length; i++) {
    for (let j = i + 1; j < named.length; j++) {
      const [na, pa, a] = named[i]!;
      const [nb, pb, b] = named[j]!;
      const x = normalize(a);
      const y = normalize(b);
      // Marked on the later field of the two, or the plan's own field when the other is a stage directory.
      const at = pb || pa;
      if (x === y) out.push(issue(at, `the same directory as ${pb ? na : nb} (${x})`, `${na} and ${nb}: the same directory ${x}`));
      else if (contains(x, y)) out.push(issue(at, `${na} (${x}) contains ${nb} (${y})`, `${na} (${x}) contains ${nb} (${y})`));
      else if (contains(y, x)) out.push(issue(at, `${nb} (${y}) contains ${na} (${x})`, `${nb} (${y}) contains ${na} (${x})`));
    }
  }
  const targets = new Set(t.nodes.map((n) => n.node_id));
  for (const [i, p] of (plan.plugin_nodes ?? []).entries()) {
    if (!targets.has(p.target_node_id)) {
      out.push(issue(ptr('plugin_nodes', i, 'target_node_id'), `${p.target_node_id} is not a target node`));
    }
  }
  if (plan.plugin_nodes && plan.plugin_nodes.length > 0) {
    const covered = new Set(plan.plugin_nodes.map((p) => p.target_node_id));
    for (const n of t.nodes) if (!covered.has(n.node_id)) out.push(issue('/plugin_nodes', `target node ${n.node_id} is not covered`));
  }
  return out;
}

/**
 * Every problem of a parsed plan file, each with the JSON Pointer of the
 * member it concerns: the schema's, and the rules that relate members to each
 * other (run whenever the parts they need have the right shape). The console's
 * plan editor and `parleyctl` run this same function.
 */
export function planIssues(input: unknown, dirs: PlanDirs = {}): PlanIssue[] {
  const issues = schemaIssues(input);
  if (issues.length === 0) return crossIssues(input as Plan, dirs);
  const partial = input as Partial<Plan> | undefined;
  if (partial && Array.isArray(partial.sources) && partial.target && Array.isArray(partial.target.nodes)) {
    try {
      const texts = new Set(issues.map((i) => i.text));
      issues.push(...crossIssues(partial as Plan, dirs).filter((i) => !texts.has(i.text)));
    } catch {
      // shapes too broken for cross rules; the schema problems say why
    }
  }
  return issues;
}

/**
 * Checks a parsed plan file against the schema and every rule that needs no
 * filesystem access. Returns the typed plan, or every problem at once.
 */
export function checkPlan(input: unknown, dirs: PlanDirs = {}): { plan?: Plan; problems: string[] } {
  const problems = planIssues(input, dirs).map((i) => i.text);
  return problems.length > 0 ? { problems } : { plan: input as Plan, problems: [] };
}
