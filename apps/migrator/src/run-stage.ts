import process from 'node:process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildInfo, progress, StageError, type ReportBase } from './stages/common.ts';

/** Set by a stage once the workspace is its own (created or legitimately reused). */
export interface StageContext {
  ownsWorkspace: boolean;
}

/** Statuses that mean success (exit 0). */
const SUCCESS = new Set(['prepared', 'exported', 'imported', 'offline_verified', 'diagnosed', 'mapped', 'ok']);

/** A fresh report for `stage`, status `failed` until the stage says otherwise. */
export function newReport<R extends ReportBase>(stage: string, extra: Omit<R, keyof ReportBase>): R {
  return {
    stage,
    status: 'failed',
    tool: buildInfo(),
    errors: [],
    started_at: new Date().toISOString(),
    duration_ms: 0,
    ...extra,
  } as unknown as R;
}

/**
 * Runs one stage: the report goes to stdout as JSON (and, when the stage made
 * its workspace, to `<workspace>/report.json`); failures set the status and
 * the reason; the exit code is 0 only on success.
 */
export async function runStage<R extends ReportBase>(
  report: R,
  body: (report: R, ctx: StageContext) => void | Promise<void>,
  workspace?: string,
  print = true,
): Promise<number> {
  const t0 = Date.now();
  const ctx: StageContext = { ownsWorkspace: false };
  try {
    await body(report, ctx);
  } catch (err) {
    report.status = 'failed';
    if (err instanceof StageError) report.errors.push(...err.problems);
    else report.errors.push(err instanceof Error ? err.message : String(err));
  }
  report.duration_ms = Date.now() - t0;
  for (const e of report.errors) progress(`${report.stage}: ${e}`);
  const text = `${JSON.stringify(report, null, 2)}\n`;
  if (workspace !== undefined && ctx.ownsWorkspace && existsSync(workspace) && !existsSync(join(workspace, 'report.json'))) {
    try {
      writeFileSync(join(workspace, 'report.json'), text, { mode: 0o600, flag: 'wx' });
    } catch {
      progress(`${report.stage}: could not keep the report in ${workspace}`);
    }
  }
  if (print) process.stdout.write(text);
  return SUCCESS.has(report.status) ? 0 : 1;
}
