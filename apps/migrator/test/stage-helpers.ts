import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { PatchOp } from '../src/prepare/findings.ts';
import { applyPatch } from '../src/prepare/patch.ts';
import { newReport, runStage } from '../src/run-stage.ts';
import { runDiagnose, type DiagnoseReport } from '../src/stages/diagnose-stage.ts';
import { runExportMap, type ExportMapReport } from '../src/stages/export-map-stage.ts';
import type { ReportBase } from '../src/stages/common.ts';
import { runExport, type ExportReport } from '../src/stages/export-stage.ts';
import { runImport, type ImportReport } from '../src/stages/import-stage.ts';
import { runPrepare, type PrepareReport } from '../src/stages/prepare-stage.ts';
import { runVerify, type VerifyReport } from '../src/stages/verify-stage.ts';

/** A stage run in this process: exit code and report, nothing printed on stdout. */
export interface Ran<R extends ReportBase> {
  code: number;
  report: R;
}

export async function prepare(plan: string, ws: string): Promise<Ran<PrepareReport>> {
  const report = newReport<PrepareReport>('prepare', { blockers: [], warnings: [] });
  return { code: await runStage(report, (r, ctx) => runPrepare(plan, ws, r, ctx), ws, false), report };
}

export async function exportArchive(plan: string, ws: string, archive: string): Promise<Ran<ExportReport>> {
  const report = newReport<ExportReport>('export', {});
  return { code: await runStage(report, (r) => runExport(plan, ws, archive, r), undefined, false), report };
}

export async function importArchive(plan: string, ws: string, archive: string): Promise<Ran<ImportReport>> {
  const report = newReport<ImportReport>('import', { targets: [] });
  return { code: await runStage(report, (r, ctx) => runImport(plan, ws, archive, r, ctx), ws, false), report };
}

export async function verify(plan: string, ws: string, archive: string): Promise<Ran<VerifyReport>> {
  const report = newReport<VerifyReport>('verify', { targets: [], mismatches: [] });
  return { code: await runStage(report, (r, ctx) => runVerify(plan, ws, archive, r, ctx), ws, false), report };
}

export async function diagnose(plan: string, ws: string): Promise<Ran<DiagnoseReport>> {
  const report = newReport<DiagnoseReport>('diagnose', { blockers: [], warnings: [] });
  return { code: await runStage(report, (r, ctx) => runDiagnose(plan, ws, r, ctx), ws, false), report };
}

export async function exportMap(plan: string, ws: string, archive: string): Promise<Ran<ExportMapReport>> {
  const report = newReport<ExportMapReport>('export-map', {});
  return { code: await runStage(report, (r, ctx) => runExportMap(plan, ws, archive, r, ctx), ws, false), report };
}

/** Writes `plan` with `patch` applied (RFC 6902) next to it; returns the new file. */
export function patchedPlan(plan: string, patch: readonly PatchOp[], name = 'plan-patched.json'): string {
  const file = join(dirname(plan), name);
  writeFileSync(file, JSON.stringify(applyPatch(JSON.parse(readFileSync(plan, 'utf8')), patch), null, 2));
  return file;
}

/** Writes a copy of `plan` changed by `edit` next to it; returns the new file. */
export function editedPlan(plan: string, edit: (p: any) => void, name = 'plan-edited.json'): string {
  const json = JSON.parse(readFileSync(plan, 'utf8'));
  edit(json);
  const file = join(dirname(plan), name);
  writeFileSync(file, JSON.stringify(json, null, 2));
  return file;
}
