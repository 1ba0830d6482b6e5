import { newReport, runStage } from '../src/run-stage.ts';
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
