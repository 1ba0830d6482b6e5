import type { ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Value } from '@sinclair/typebox/value';
import { STAGE_SUCCESS, StageReportEnvelope, type MigrationStage, type RunRecord, type RunStatus } from '@parley/shared';
import { Refused, REPORTS_DIR } from './layout.ts';
import { writeJsonAtomic } from './store.ts';
import { spawnTool, type ToolCommand } from './tool.ts';

/** Stderr lines a run keeps (older ones are dropped; `since` offsets stay absolute). */
export const MAX_LOG_LINES = 5_000;
/** Longest stderr line kept, characters. */
const MAX_LINE = 4_000;
/** Most stdout (the report) a stage may print, bytes. */
const MAX_REPORT_BYTES = 256 * 1024 * 1024;
/** Finished runs kept in memory besides their files. */
const KEEP_FINISHED = 32;

/** How long cancel waits after SIGINT before SIGTERM, and after SIGTERM before SIGKILL, ms. */
export interface CancelGrace {
  interruptMs: number;
  terminateMs: number;
}

/** `n/m` in a progress line (`prepare: node 1 shard 3/8: …`): how far the stage is. */
export function parseProgress(line: string): { done: number; total: number } | undefined {
  const m = /(?:^|\s)(\d{1,9})\/(\d{1,9})(?=[:\s,)]|$)/.exec(line);
  if (!m) return undefined;
  const done = Number(m[1]);
  const total = Number(m[2]);
  return total > 0 && done <= total ? { done, total } : undefined;
}

/** `20261124T061331Z`: a UTC time for file names. */
function stamp(d: Date): string {
  return d.toISOString().replace(/[-:]/g, '').replace(/\.\d+/, '');
}

interface LiveRun {
  record: RunRecord;
  child?: ChildProcess;
  lines: string[];
  /** Lines dropped from the front of `lines`. */
  dropped: number;
  cancelled: boolean;
  done: Promise<void>;
}

export interface StartRun {
  planId: string;
  planDir: string;
  planFile: string;
  stage: MigrationStage;
  workspace: string;
  archive?: string;
}

/**
 * Runs `parleyctl migrate <stage>` as child processes: one at a time per
 * plan folder (so per workspace), stderr kept as lines for the page to poll,
 * stdout kept as the report. When a run ends its report is saved as printed
 * (`reports/<stage>-<time>.json`) beside its record (`….run.json`).
 */
export class StageRunner {
  private readonly runs = new Map<string, LiveRun>();
  private seq = 0;

  constructor(
    private readonly tool: ToolCommand,
    private readonly grace: CancelGrace = { interruptMs: 5_000, terminateMs: 5_000 },
  ) {}

  active(): RunRecord[] {
    return [...this.runs.values()].filter((r) => r.record.state === 'running').map((r) => ({ ...r.record }));
  }

  activeFor(planId: string): RunRecord | undefined {
    return this.active().find((r) => r.plan_id === planId);
  }

  start(s: StartRun): RunRecord {
    const running = this.activeFor(s.planId);
    if (running) throw new Refused('busy', `${running.stage} is still running for ${s.planId}; one stage at a time`);
    const now = new Date();
    const base = `${s.stage}-${stamp(now)}-${++this.seq}`;
    const args = ['migrate', s.stage, '--plan', s.planFile, '--workspace', s.workspace, ...(s.archive ? ['--archive', s.archive] : [])];
    const record: RunRecord = {
      id: `${s.planId}-${base}`.toLowerCase(),
      plan_id: s.planId,
      stage: s.stage,
      workspace: s.workspace,
      argv: ['parleyctl', ...args],
      state: 'running',
      started_at: now.toISOString(),
      line_count: 0,
      log_file: `${base}.log`,
    };
    if (s.archive) record.archive = s.archive;
    const reports = join(s.planDir, REPORTS_DIR);
    mkdirSync(reports, { recursive: true, mode: 0o700 });
    const runFile = join(reports, `${base}.run.json`);
    writeJsonAtomic(runFile, record);

    // The whole stderr stays beside the report, for after the run (and after a restart of the console).
    const log = createWriteStream(join(reports, `${base}.log`), { mode: 0o600 });
    log.on('error', () => undefined);
    const live: LiveRun = { record, lines: [], dropped: 0, cancelled: false, done: Promise.resolve() };
    const child = spawnTool(this.tool, args);
    live.child = child;
    const stdout: Buffer[] = [];
    let stdoutBytes = 0;
    let overflow = false;
    let pending = '';
    const pushLine = (line: string) => {
      const l = line.length > MAX_LINE ? `${line.slice(0, MAX_LINE)}…` : line;
      live.lines.push(l);
      log.write(`${l}\n`);
      record.line_count++;
      record.last_line = l;
      const p = parseProgress(l);
      if (p) record.progress = p;
      if (live.lines.length > MAX_LOG_LINES) {
        live.lines.shift();
        live.dropped++;
      }
    };
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (d: string) => {
      pending += d;
      const parts = pending.split('\n');
      pending = parts.pop()!;
      for (const p of parts) pushLine(p);
      if (pending.length > MAX_LINE * 4) {
        pushLine(pending);
        pending = '';
      }
    });
    child.stdout!.on('data', (d: Buffer) => {
      stdoutBytes += d.length;
      if (stdoutBytes > MAX_REPORT_BYTES) overflow = true;
      else stdout.push(d);
    });
    let spawnError: string | undefined;
    child.on('error', (e) => (spawnError = `parleyctl could not be started: ${e.message}`));
    live.done = new Promise<void>((resolve) => {
      child.on('close', (code, signal) => {
        if (pending) pushLine(pending);
        record.ended_at = new Date().toISOString();
        record.exit_code = code;
        record.signal = signal;
        const text = Buffer.concat(stdout).toString('utf8');
        let report: unknown;
        try {
          report = text.trim() ? JSON.parse(text) : undefined;
        } catch {
          report = undefined;
        }
        if (spawnError) record.error = spawnError;
        else if (overflow) record.error = `the report is larger than ${MAX_REPORT_BYTES} bytes`;
        else if (report === undefined) record.error = live.cancelled ? 'cancelled before it printed a report' : 'no report on stdout';
        else if (!Value.Check(StageReportEnvelope, report)) record.error = 'stdout is not a stage report';
        else {
          const reportFile = `${base}.json`;
          writeFileSync(join(reports, reportFile), text, { mode: 0o600, flag: 'wx' });
          record.report_file = reportFile;
          record.report_status = (report as StageReportEnvelope).status;
        }
        // A stage that finished before the interrupt reached it has still succeeded.
        record.state =
          code === 0 && record.report_status === STAGE_SUCCESS[s.stage] ? 'succeeded' : live.cancelled ? 'cancelled' : 'failed';
        delete live.child;
        try {
          writeJsonAtomic(runFile, record);
        } finally {
          this.trim();
          log.end(() => resolve());
        }
      });
    });
    this.runs.set(record.id, live);
    return { ...record };
  }

  /** A run with its stderr lines from `since` (an absolute line number) on. */
  status(id: string, since = 0): RunStatus | undefined {
    const live = this.runs.get(id);
    if (!live) return undefined;
    const from = Math.max(0, since - live.dropped);
    return { ...live.record, lines: live.lines.slice(from), next: live.dropped + live.lines.length };
  }

  /** SIGINT (what an operator's Ctrl-C sends), then SIGTERM, then SIGKILL, each after its grace. */
  cancel(id: string): RunRecord | undefined {
    const live = this.runs.get(id);
    if (!live) return undefined;
    const child = live.child;
    if (live.record.state !== 'running' || !child) return { ...live.record };
    live.cancelled = true;
    child.kill('SIGINT');
    const term = setTimeout(() => {
      if (live.child) live.child.kill('SIGTERM');
      const kill = setTimeout(() => live.child?.kill('SIGKILL'), this.grace.terminateMs);
      kill.unref();
    }, this.grace.interruptMs);
    term.unref();
    void live.done.then(() => clearTimeout(term));
    return { ...live.record };
  }

  /** Resolves when run `id` has ended (its files written). */
  async settled(id: string): Promise<RunRecord | undefined> {
    const live = this.runs.get(id);
    if (!live) return undefined;
    await live.done;
    return { ...live.record };
  }

  /** Cancels every run and waits for them (the console is stopping). */
  async stopAll(): Promise<void> {
    const running = [...this.runs.values()].filter((r) => r.record.state === 'running');
    for (const r of running) this.cancel(r.record.id);
    await Promise.all(running.map((r) => r.done));
  }

  private trim(): void {
    const finished = [...this.runs.values()].filter((r) => r.record.state !== 'running');
    for (const r of finished.slice(0, Math.max(0, finished.length - KEEP_FINISHED))) this.runs.delete(r.record.id);
  }
}
