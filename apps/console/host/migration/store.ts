import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { ChecklistDoc, Plan, RunRecord, type PlanSummary, type StageProposal } from '@parley/shared';
import { CHECKLIST_FILE, nextName, PLAN_FILE, planDir, planIds, PREFLIGHT_FILE, Refused, REPORTS_DIR, SAVED_FILE } from './layout.ts';

/** SHA-256, hex. */
export function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** JSON with object keys sorted: what `parleyctl` takes a plan's `plan_sha256` over. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/** A JSON file checked against `schema`; undefined when absent or not of that shape. */
export function readChecked<T>(schema: TSchema, file: string): T | undefined {
  if (!existsSync(file)) return undefined;
  try {
    const v: unknown = JSON.parse(readFileSync(file, 'utf8'));
    return Value.Check(schema, v) ? (v as T) : undefined;
  } catch {
    return undefined;
  }
}

/** Writes a small JSON file owner-only and atomically (a reader sees the old file or the new one). */
export function writeJsonAtomic(file: string, value: unknown): void {
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, file);
}

export function emptyChecklist(): ChecklistDoc {
  return { version: 1, items: {}, checks: {}, fields: {} };
}

/** The preflight checklist (root) or a plan's acceptance checklist. */
export function checklistFile(root: string, scope: string): string {
  return scope === 'preflight' ? join(root, PREFLIGHT_FILE) : join(planDir(root, scope), CHECKLIST_FILE);
}

export function readChecklist(root: string, scope: string): ChecklistDoc {
  return readChecked<ChecklistDoc>(ChecklistDoc, checklistFile(root, scope)) ?? emptyChecklist();
}

export function writeChecklist(root: string, scope: string, doc: ChecklistDoc): void {
  writeJsonAtomic(checklistFile(root, scope), doc);
}

/** `plan-<n>/saved.json`: when the plan was saved, and from which plan. */
const Saved = Type.Object({ saved_at: Type.String(), based_on: Type.Optional(Type.String()) });
type Saved = Static<typeof Saved>;

/** A saved plan as read back (plan.json is checked against the schema again: it is a file on disk). */
export function readPlan(root: string, id: string): { plan: Plan; summary: PlanSummary; file: string } {
  const dir = planDir(root, id);
  const file = join(dir, PLAN_FILE);
  const bytes = readFileSync(file);
  const plan: unknown = JSON.parse(bytes.toString('utf8'));
  if (!Value.Check(Plan, plan)) throw new Refused('invalid_request', `${file} is no longer a valid plan`);
  const saved = readChecked<Saved>(Saved, join(dir, SAVED_FILE));
  const summary: PlanSummary = {
    id,
    dir,
    sha256: sha256(bytes),
    canonical_sha256: sha256(canonicalJson(plan)),
    saved_at: saved?.saved_at ?? '',
    cluster_id: plan.target.cluster_id,
  };
  if (saved?.based_on) summary.based_on = saved.based_on;
  return { plan, summary, file };
}

export function listPlans(root: string): PlanSummary[] {
  const out: PlanSummary[] = [];
  for (const id of planIds(root)) {
    try {
      out.push(readPlan(root, id).summary);
    } catch {
      // a folder someone changed by hand: left out, not fatal
    }
  }
  return out;
}

/** Saves a checked plan as the next `plan-<n>`: a folder of its own, so every stage starts afresh (seed rule 5). */
export function savePlan(root: string, plan: Plan, basedOn?: string): string {
  const ids = planIds(root);
  let n = ids.length > 0 ? Number(ids.at(-1)!.slice(5)) + 1 : 1;
  for (; ; n++) {
    try {
      mkdirSync(join(root, `plan-${n}`), { mode: 0o700 });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  const id = `plan-${n}`;
  const dir = join(root, id);
  writeFileSync(join(dir, PLAN_FILE), `${JSON.stringify(plan, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  const saved: Saved = { saved_at: new Date().toISOString() };
  if (basedOn) saved.based_on = basedOn;
  writeFileSync(join(dir, SAVED_FILE), `${JSON.stringify(saved, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  mkdirSync(join(dir, REPORTS_DIR), { mode: 0o700 });
  return id;
}

/** Every run recorded in a plan's reports folder, oldest first. */
export function listRuns(dir: string): RunRecord[] {
  const reports = join(dir, REPORTS_DIR);
  if (!existsSync(reports)) return [];
  const out: RunRecord[] = [];
  for (const f of readdirSync(reports)) {
    if (!f.endsWith('.run.json')) continue;
    const r = readChecked<RunRecord>(RunRecord, join(reports, f));
    if (r) out.push(r);
  }
  return out.sort((a, b) => (a.started_at < b.started_at ? -1 : a.started_at > b.started_at ? 1 : 0));
}

/** A workspace left by an interrupted run: there, but without the report a finished stage leaves. */
function interrupted(path: string | undefined): boolean {
  return path !== undefined && existsSync(path) && !existsSync(join(path, 'report.json'));
}

/**
 * Where the next run of each stage goes. A workspace an interrupted run left
 * is proposed again (each stage's own rerun rules reuse it); otherwise a new
 * one. Export uses the last good prepare workspace and reuses its archive
 * while that is partial or complete for the same workspace; import, verify
 * and export-map read the last good export's archive.
 */
export function proposals(dir: string, runs: readonly RunRecord[]): Record<string, StageProposal> {
  const last = (stage: string, ok = false) => [...runs].reverse().find((r) => r.stage === stage && (!ok || r.state === 'succeeded'));
  const workspace = (stage: string, base: string, unnumbered: boolean) => {
    const prev = last(stage);
    return interrupted(prev?.workspace) && prev!.state !== 'running' ? prev!.workspace : nextName(dir, base, unnumbered);
  };
  const prepared = last('prepare', true) ?? last('prepare');
  const exportWs = prepared?.workspace ?? join(dir, 'ws-prepare');
  const prevExport = last('export');
  const archiveFor =
    prevExport?.archive !== undefined &&
    prevExport.workspace === exportWs &&
    (existsSync(join(prevExport.archive, '.parley-export-partial')) || prevExport.state === 'succeeded' || !existsSync(prevExport.archive))
      ? prevExport.archive
      : nextName(dir, 'archive', true);
  const archive = last('export', true)?.archive ?? join(dir, 'archive');
  return {
    diagnose: { workspace: workspace('diagnose', 'ws-diagnose', false) },
    prepare: { workspace: workspace('prepare', 'ws-prepare', true) },
    export: { workspace: exportWs, archive: archiveFor },
    import: { workspace: workspace('import', 'ws-import', false), archive },
    verify: { workspace: workspace('verify', 'ws-verify', false), archive },
    'export-map': { workspace: workspace('export-map', 'ws-export-map', false), archive },
  };
}
