import { ValueErrorType } from '@sinclair/typebox/errors';
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

/** Schema problems, one line each; unknown members are named as such. */
function schemaProblems(input: unknown): string[] {
  const out: string[] = [];
  for (const e of Value.Errors(Plan, input)) {
    if (e.type === ValueErrorType.ObjectAdditionalProperties) {
      const cut = e.path.lastIndexOf('/');
      out.push(`${where(e.path.slice(0, cut))}: unknown member "${e.path.slice(cut + 1)}" (not supported by this release)`);
      continue;
    }
    if (e.type === ValueErrorType.Union) {
      const options = ((e.schema as { anyOf?: Array<{ const?: unknown }> }).anyOf ?? []).map((o) => o.const);
      const listed = options.every((o) => o !== undefined) ? options.map((o) => JSON.stringify(o)).join(', ') : '';
      out.push(`${where(e.path)}: ${listed ? `must be one of ${listed}` : e.message}`);
      continue;
    }
    out.push(`${where(e.path)}: ${e.message}`);
  }
  return [...new Set(out)];
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
function crossProblems(plan: Plan, dirs: PlanDirs): string[] {
  const out: string[] = [];
  const t = plan.target;
  if (plan.source_commit !== undefined && plan.source_commit !== SUPPORTED_SOURCE_COMMIT) {
    out.push(`plan.source_commit: unsupported value "${plan.source_commit}" (this release reads only ${SUPPORTED_SOURCE_COMMIT})`);
  }
  if (Number.isNaN(Date.parse(t.created_at))) out.push('plan.target.created_at: not a valid ISO 8601 timestamp');
  if (t.replicas > t.nodes.length) out.push(`plan.target.replicas: ${t.replicas} exceeds the target node count ${t.nodes.length}`);
  if (t.channel_replicas > t.nodes.length) {
    out.push(`plan.target.channel_replicas: ${t.channel_replicas} exceeds the target node count ${t.nodes.length}`);
  }
  const dup = <T>(items: T[], label: string) => {
    const seen = new Set<T>();
    for (const v of items) {
      if (seen.has(v)) out.push(`${label}: duplicate value ${JSON.stringify(v)}`);
      seen.add(v);
    }
  };
  dup(
    plan.sources.map((s) => s.node_id),
    'plan.sources[].node_id',
  );
  dup(
    t.nodes.map((n) => n.node_id),
    'plan.target.nodes[].node_id',
  );
  dup(
    t.nodes.map((n) => n.addr),
    'plan.target.nodes[].addr',
  );
  const named: Array<[string, string]> = [
    ...plan.sources.map((s, i): [string, string] => [`plan.sources[${i}].data_dir`, s.data_dir]),
    ...t.nodes.map((n, i): [string, string] => [`plan.target.nodes[${i}].data_dir`, n.data_dir]),
  ];
  if (dirs.workspace !== undefined) named.push(['--workspace', dirs.workspace]);
  if (dirs.archive !== undefined) named.push(['--archive', dirs.archive]);
  for (let i = 0; i < named.length; i++) {
    for (let j = i + 1; j < named.length; j++) {
      const [na, a] = named[i]!;
      const [nb, b] = named[j]!;
      const x = normalize(a);
      const y = normalize(b);
      if (x === y) out.push(`${na} and ${nb}: the same directory ${x}`);
      else if (contains(x, y)) out.push(`${na} (${x}) contains ${nb} (${y})`);
      else if (contains(y, x)) out.push(`${nb} (${y}) contains ${na} (${x})`);
    }
  }
  const targets = new Set(t.nodes.map((n) => n.node_id));
  for (const [i, p] of (plan.plugin_nodes ?? []).entries()) {
    if (!targets.has(p.target_node_id)) out.push(`plan.plugin_nodes[${i}].target_node_id: ${p.target_node_id} is not a target node`);
  }
  if (plan.plugin_nodes && plan.plugin_nodes.length > 0) {
    const covered = new Set(plan.plugin_nodes.map((p) => p.target_node_id));
    for (const n of t.nodes) if (!covered.has(n.node_id)) out.push(`plan.plugin_nodes: target node ${n.node_id} is not covered`);
  }
  return out;
}

/**
 * Checks a parsed plan file against the schema and every rule that needs no
 * filesystem access. Returns the typed plan, or every problem at once.
 */
export function checkPlan(input: unknown, dirs: PlanDirs = {}): { plan?: Plan; problems: string[] } {
  const problems = schemaProblems(input);
  if (problems.length > 0) {
    // Cross rules still run when the parts they need have the right shape.
    const partial = input as Partial<Plan> | undefined;
    if (partial && Array.isArray(partial.sources) && partial.target && Array.isArray(partial.target.nodes)) {
      try {
        problems.push(...crossProblems(partial as Plan, dirs).filter((p) => !problems.includes(p)));
      } catch {
        // shapes too broken for cross rules; the schema problems say why
      }
    }
    return { problems };
  }
  const plan = input as Plan;
  const cross = crossProblems(plan, dirs);
  return cross.length > 0 ? { problems: cross } : { plan, problems: [] };
}
