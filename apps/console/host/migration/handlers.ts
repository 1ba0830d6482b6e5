import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import {
  ACCEPTANCE_MANUAL_ITEMS,
  CheckRequest,
  DbInfoReply,
  DbInfoRequest,
  PlanRef,
  planIssues,
  PREFLIGHT_MANUAL_ITEMS,
  ReportRef,
  RunRef,
  SavePlanRequest,
  SetFieldsRequest,
  SetRootRequest,
  StartRunRequest,
  STAGES_WITH_ARCHIVE,
  TickRequest,
  type ChecklistDoc,
  type HostErrorCode,
  type MigrationState,
  type Plan,
  type RunRecord,
} from '@parley/shared';
import type { HostResult, MigrationHandlers } from '../contract.ts';
import type { NodeRegistry } from '../node-registry.ts';
import { checkConfig, checkReadyz, checkSources, checkToken, checkTool, consoleNode, gatewayProblem, type CheckDeps } from './checks.ts';
import { openRoot, planDir, planDirectory, Refused, REPORTS_DIR, stageDir } from './layout.ts';
import { StageRunner } from './runner.ts';
import { listPlans, listRuns, proposals, readChecklist, readPlan, savePlan, writeChecklist } from './store.ts';
import type { SocketFactory } from './token-check.ts';
import { runProbe, type ToolCommand } from './tool.ts';

export interface MigrationDeps {
  tool: ToolCommand;
  registry: NodeRegistry;
  opsGet: CheckDeps['opsGet'];
  socket?: SocketFactory;
  /** A root set by the operator at launch (`--migration-root`): the page cannot change it. */
  root?: string;
  runner?: StageRunner;
}

/** Lines of a finished run's stderr sent with its report. */
const LOG_TAIL = 2_000;

const ok = <T>(value: T): HostResult<T> => ({ ok: true, value });
const no = <T>(code: HostErrorCode, error: string): HostResult<T> => ({ ok: false, error: { code, error } });

function invalid(schema: TSchema, payload: unknown): string | undefined {
  if (Value.Check(schema, payload)) return undefined;
  const first = Value.Errors(schema, payload).First();
  return first ? `${first.path || '/'}: ${first.message}` : 'invalid payload';
}

/** Runs `fn` on a checked payload; refusals become the host's error answers. */
function guarded<S extends TSchema, T>(schema: S | undefined, fn: (p: never) => Promise<T> | T) {
  return async (payload: unknown): Promise<HostResult<T>> => {
    const bad = schema ? invalid(schema, payload) : undefined;
    if (bad) return no('invalid_request', bad);
    try {
      return ok(await fn(payload as never));
    } catch (err) {
      if (err instanceof Refused) return no(err.code, err.message);
      throw err;
    }
  };
}

/**
 * The wizard's handlers: the same functions behind `parleyctl console`'s
 * loopback API and Electron's IPC. Every path is decided or checked here
 * (inside the root, the plan's folder, or the plan's own directories), never
 * trusted from the page; every stage and probe is `parleyctl` itself.
 */
export function createMigrationHandlers(deps: MigrationDeps): { handlers: MigrationHandlers; runner: StageRunner } {
  let root = deps.root ? openRoot(deps.root) : undefined;
  const locked = deps.root !== undefined;
  const runner = deps.runner ?? new StageRunner(deps.tool);
  const checkDeps: CheckDeps = { tool: deps.tool, registry: deps.registry, opsGet: deps.opsGet, socket: deps.socket };

  const needRoot = (): string => {
    if (!root) throw new Refused('no_root', 'choose a migration root first');
    return root;
  };
  /** Runs as recorded, with a record left `running` by a console that stopped shown as failed. */
  const runsOf = (dir: string): RunRecord[] =>
    listRuns(dir).map((r) =>
      r.state === 'running' && !runner.active().some((a) => a.id === r.id)
        ? { ...r, state: 'failed', error: r.error ?? 'the console stopped while this ran' }
        : r,
    );
  const state = (): MigrationState => ({
    root: root ?? null,
    root_locked: locked,
    plans: root ? listPlans(root) : [],
    preflight: root ? readChecklist(root, 'preflight') : null,
    active_runs: runner.active(),
  });
  const manualItems = (scope: string): readonly string[] => (scope === 'preflight' ? PREFLIGHT_MANUAL_ITEMS : ACCEPTANCE_MANUAL_ITEMS);
  const lastArchive = (dir: string): string | undefined =>
    [...runsOf(dir)].reverse().find((r) => r.stage === 'export' && r.state === 'succeeded')?.archive;

  const handlers: MigrationHandlers = {
    'migration:state': guarded(undefined, () => state()),

    'migration:set-root': guarded(SetRootRequest, (p: SetRootRequest) => {
      if (locked) throw new Refused('invalid_request', 'the migration root was set when the console started (--migration-root)');
      if (runner.active().length > 0) throw new Refused('busy', 'a stage is running');
      root = openRoot(p.path);
      return state();
    }),

    'migration:save-plan': guarded(SavePlanRequest, (p: SavePlanRequest) => {
      const r = needRoot();
      const issues = planIssues(p.plan);
      if (issues.length > 0) throw new Refused('invalid_request', `the plan has ${issues.length} problem(s): ${issues[0]!.text}`);
      if (p.based_on) planDir(r, p.based_on);
      return readPlan(r, savePlan(r, p.plan as Plan, p.based_on)).summary;
    }),

    'migration:plan': guarded(PlanRef, (p: PlanRef) => {
      const r = needRoot();
      const { plan, summary } = readPlan(r, p.plan_id);
      const runs = runsOf(summary.dir);
      return { summary, plan, runs, proposals: proposals(summary.dir, runs), checklist: readChecklist(r, p.plan_id) };
    }),

    'migration:report': guarded(ReportRef, (p: ReportRef) => {
      const dir = planDir(needRoot(), p.plan_id);
      const file = join(dir, REPORTS_DIR, p.file);
      if (!existsSync(file)) throw new Refused('not_found', `no report ${p.file}`);
      const run = runsOf(dir).find((x) => x.report_file === p.file) ?? null;
      const logFile = join(dir, REPORTS_DIR, p.file.replace(/\.json$/, '.log'));
      const log = existsSync(logFile) ? readFileSync(logFile, 'utf8').split('\n').filter(Boolean).slice(-LOG_TAIL) : [];
      return { run, report: JSON.parse(readFileSync(file, 'utf8')) as unknown, log };
    }),

    'migration:run-start': guarded(StartRunRequest, (p: StartRunRequest) => {
      const r = needRoot();
      const { file, summary } = readPlan(r, p.plan_id);
      const workspace = stageDir(summary.dir, p.workspace, 'the workspace');
      const wantsArchive = STAGES_WITH_ARCHIVE.includes(p.stage);
      if (wantsArchive !== (p.archive !== undefined))
        throw new Refused('invalid_request', `${p.stage} ${wantsArchive ? 'needs' : 'takes no'} archive`);
      const archive = p.archive === undefined ? undefined : stageDir(summary.dir, p.archive, 'the archive');
      if (archive === workspace) throw new Refused('path_not_allowed', 'the workspace and the archive must differ');
      return runner.start({ planId: p.plan_id, planDir: summary.dir, planFile: file, stage: p.stage, workspace, archive });
    }),

    'migration:run-status': guarded(RunRef, (p: RunRef) => {
      const s = runner.status(p.run_id, p.since ?? 0);
      if (!s) throw new Refused('not_found', 'no such run (finished runs are in the plan’s reports)');
      return s;
    }),

    'migration:run-cancel': guarded(RunRef, (p: RunRef) => {
      const s = runner.cancel(p.run_id);
      if (!s) throw new Refused('not_found', 'no such run');
      return s;
    }),

    'migration:db-info': guarded(DbInfoRequest, async (p: DbInfoRequest) => {
      const { plan } = readPlan(needRoot(), p.plan_id);
      const dir = planDirectory(plan, p.dir);
      const res = await runProbe(deps.tool, ['db', 'info', dir]);
      let info: unknown;
      try {
        info = JSON.parse(res.stdout);
      } catch {
        info = undefined;
      }
      if (!Value.Check(DbInfoReply, info))
        throw new Refused('invalid_request', `db info failed: ${res.failure ?? res.stderr.trim().slice(0, 300)}`);
      return info;
    }),

    'migration:tick': guarded(TickRequest, (p: TickRequest) => {
      const r = needRoot();
      if (!manualItems(p.scope).includes(p.item)) throw new Refused('invalid_request', `${p.item} is not an item of this checklist`);
      const doc = readChecklist(r, p.scope);
      doc.items[p.item] = {
        done: p.done,
        by: p.by.trim(),
        at: new Date().toISOString(),
        ...(p.note?.trim() ? { note: p.note.trim() } : {}),
      };
      writeChecklist(r, p.scope, doc);
      return doc;
    }),

    'migration:set-fields': guarded(SetFieldsRequest, (p: SetFieldsRequest) => {
      const r = needRoot();
      const doc = readChecklist(r, p.scope);
      const f = p.fields;
      if (p.scope === 'preflight') {
        if (f.nodes !== undefined || f.production_writes !== undefined) throw new Refused('invalid_request', 'not a preflight field');
      } else if (f.target_commit !== undefined || f.rehearsal_only !== undefined)
        throw new Refused('invalid_request', 'not an acceptance field');
      if (f.nodes) {
        const { plan } = readPlan(r, p.scope);
        const nodes = [...(doc.fields.nodes ?? [])];
        for (const n of f.nodes) {
          if (!plan.target.nodes.some((t) => t.node_id === n.node_id))
            throw new Refused('invalid_request', `${n.node_id} is not a target node`);
          if (n.api_url) {
            const c = consoleNode(deps.registry, n.api_url, n.node_id);
            if ('error' in c) throw new Refused('invalid_request', `node ${n.node_id}: ${c.error}`);
          }
          const at = nodes.findIndex((x) => x.node_id === n.node_id);
          const merged = at >= 0 ? { ...nodes[at], ...n } : n;
          const why = gatewayProblem(merged);
          if (why) throw new Refused('invalid_request', `node ${n.node_id}: ${why}`);
          if (at >= 0) nodes[at] = merged;
          else nodes.push(merged);
        }
        doc.fields.nodes = nodes;
      }
      for (const k of ['target_commit', 'rehearsal_only', 'production_writes'] as const) {
        if (f[k] !== undefined) (doc.fields as Record<string, unknown>)[k] = f[k];
      }
      writeChecklist(r, p.scope, doc);
      return doc;
    }),

    'migration:check': guarded(CheckRequest, async (p: CheckRequest) => {
      const r = needRoot();
      const doc: ChecklistDoc = readChecklist(r, p.scope);
      const preflight = p.kind === 'tool' || p.kind === 'sources';
      if (preflight !== (p.scope === 'preflight')) throw new Refused('invalid_request', `${p.kind} is not a check of this checklist`);
      if (p.kind === 'tool') doc.checks.tool = (await checkTool(checkDeps, doc)).check;
      else if (p.kind === 'sources') {
        if (!p.plan_id) throw new Refused('invalid_request', 'the sources check needs a saved plan');
        doc.checks.sources = await checkSources(checkDeps, readPlan(r, p.plan_id).plan);
      } else {
        const { plan, summary } = readPlan(r, p.scope);
        if (p.kind === 'readyz') doc.checks.readyz = await checkReadyz(checkDeps, plan, doc);
        else if (p.kind === 'config') doc.checks.config = await checkConfig(checkDeps, plan, doc);
        else doc.checks.token = await checkToken(checkDeps, plan, doc, lastArchive(summary.dir));
      }
      // Re-read: a tick may have landed while the check ran; only this check's result is written.
      const fresh = readChecklist(r, p.scope);
      fresh.checks[p.kind] = doc.checks[p.kind]!;
      writeChecklist(r, p.scope, fresh);
      return fresh;
    }),
  };
  return { handlers, runner };
}
