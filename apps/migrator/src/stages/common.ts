import process from 'node:process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { checkPlan, type Plan } from '@parley/shared';
import { versionInfo, type VersionInfo } from '@parley/shared/version';
import type { Static, TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

/** A stage failure whose reasons go into the report. */
export class StageError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('; '));
    this.name = 'StageError';
  }
}

/** What every report carries besides its stage-specific fields. */
export interface ReportBase {
  stage: string;
  status: string;
  tool: VersionInfo;
  errors: string[];
  started_at: string;
  duration_ms: number;
}

/** Progress and diagnostics: one line on stderr each, never on stdout. */
export function progress(message: string): void {
  process.stderr.write(`parleyctl: ${message}\n`);
}

/** A rate for progress lines: items per second. */
export function rate(items: number, ms: number): string {
  return `${Math.round((items * 1000) / Math.max(ms, 1))}/s`;
}

/** SHA-256 of a string or bytes, hex. */
export function sha256(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** JSON with object keys sorted: the canonical text digests are taken over. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

let cachedVersion: VersionInfo | undefined;

/** `versionInfo()` of this build, asked once per process (it runs git). */
export function buildInfo(): VersionInfo {
  cachedVersion ??= versionInfo();
  return cachedVersion;
}

/** The tool identity bound into seals and markers: a changed tool needs a new run. */
export function toolIdentity(): { version: string; commit: string } {
  const v = buildInfo();
  return { version: v.version, commit: v.commit };
}

export interface LoadedPlan {
  plan: Plan;
  /** SHA-256 of the plan's canonical JSON. */
  sha256: string;
}

/** Which filesystem rules apply: targets must not exist before import, must exist for verify. */
export type PlanStage = 'prepare' | 'export' | 'import' | 'verify' | 'export-map';

/** Filesystem rules of the plan, checked on whatever parts have the right shape. */
function fsProblems(json: unknown, stage: PlanStage): string[] {
  const out: string[] = [];
  const p = json as { sources?: Array<{ data_dir?: unknown }>; target?: { nodes?: Array<{ data_dir?: unknown }> } } | null;
  for (const [i, s] of (Array.isArray(p?.sources) ? p.sources : []).entries()) {
    if (typeof s?.data_dir === 'string' && isAbsolute(s.data_dir) && !existsSync(s.data_dir)) {
      out.push(`plan.sources[${i}].data_dir: ${s.data_dir} does not exist`);
    }
  }
  const nodes = Array.isArray(p?.target?.nodes) ? p.target.nodes : [];
  for (const [i, n] of nodes.entries()) {
    if (typeof n?.data_dir !== 'string' || !isAbsolute(n.data_dir)) continue;
    if (stage === 'verify' && !existsSync(n.data_dir))
      out.push(`plan.target.nodes[${i}].data_dir: ${n.data_dir} does not exist (nothing imported)`);
    if ((stage === 'prepare' || stage === 'export') && existsSync(n.data_dir)) {
      out.push(`plan.target.nodes[${i}].data_dir: ${n.data_dir} already exists; targets must be new`);
    }
  }
  return out;
}

/** Reads and checks a plan file; every problem is reported at once. */
export function loadPlan(file: string, dirs: { workspace?: string; archive?: string }, stage: PlanStage): LoadedPlan {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new StageError([`plan ${file}: ${(err as Error).message}`]);
  }
  const problems: string[] = [];
  for (const [name, dir] of Object.entries(dirs)) {
    if (dir !== undefined && !isAbsolute(dir)) problems.push(`--${name} must be an absolute path`);
  }
  const abs = Object.fromEntries(Object.entries(dirs).map(([k, v]) => [k, v === undefined ? undefined : resolve(v)]));
  const { plan, problems: planProblems } = checkPlan(json, abs);
  problems.push(...planProblems, ...fsProblems(json, stage));
  if (!plan || problems.length > 0) throw new StageError(problems);
  return { plan, sha256: sha256(canonicalJson(plan)) };
}

/** Creates a fresh owner-only directory; refuses one that exists. */
export function createFreshDir(dir: string, what: string): void {
  if (existsSync(dir)) throw new StageError([`${what} ${dir} already exists; every stage needs a new one`]);
  mkdirSync(dirname(dir), { recursive: true });
  mkdirSync(dir, { mode: 0o700 });
  chmodSync(dir, 0o700);
}

/** Writes a small JSON file owner-only, refusing to overwrite. */
export function writeJsonFile(file: string, value: unknown, overwrite = false): void {
  writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600, flag: overwrite ? 'w' : 'wx' });
}

/** Parses JSON text read from `file`; bad JSON is a stage error naming the file. */
export function parseJson(file: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new StageError([`${file}: ${(err as Error).message}`]);
  }
}

/** `value` (read from `file`) checked against `schema`; a mismatch is a stage error naming the file and the first problems. */
export function checkedJson<S extends TSchema>(schema: S, file: string, value: unknown): Static<S> {
  if (Value.Check(schema, value)) return value;
  const problems = [...Value.Errors(schema, value)].slice(0, 3).map((e) => `${e.path || '/'} ${e.message}`);
  throw new StageError([`${file} is not what this tool wrote: ${problems.join('; ')}`]);
}

/**
 * Reads back a JSON file a stage wrote earlier (a marker, seal, manifest,
 * identity or fingerprint list), checked against its schema: a damaged or
 * foreign file is refused with its name, never used as if it were right.
 */
export function readJsonFile<S extends TSchema>(schema: S, file: string): Static<S> {
  return checkedJson(schema, file, parseJson(file, readFileSync(file, 'utf8')));
}

/** The stage's report file in its workspace. */
export function reportPath(workspace: string): string {
  return join(workspace, 'report.json');
}
