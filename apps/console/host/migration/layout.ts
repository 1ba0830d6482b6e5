import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, realpathSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { DIR_NAME_PATTERN, PLAN_ID_PATTERN, type Plan } from '@parley/shared';

/**
 * Where the wizard keeps things under the operator's migration root, and the
 * path rules the host enforces whatever the page sends: stage directories are
 * direct, non-symlinked child folders of a saved plan's folder; probes may
 * name only the plan's own source and target directories.
 */

export const ROOT_MARKER = 'migration.json';
export const PREFLIGHT_FILE = 'preflight.json';
export const PLAN_FILE = 'plan.json';
export const SAVED_FILE = 'saved.json';
export const CHECKLIST_FILE = 'checklist.json';
export const REPORTS_DIR = 'reports';

/** Names inside a plan's folder that are the console's own, never a stage directory. */
const RESERVED = new Set([PLAN_FILE, SAVED_FILE, CHECKLIST_FILE, REPORTS_DIR]);
const DIR_NAME = new RegExp(DIR_NAME_PATTERN);
export const PLAN_ID = new RegExp(PLAN_ID_PATTERN);

/** A refusal the page shows as it is. */
export class Refused extends Error {
  constructor(
    readonly code: 'path_not_allowed' | 'invalid_request' | 'exists' | 'not_found' | 'no_root' | 'busy',
    message: string,
  ) {
    super(message);
  }
}

/** `path` when it is absolute and already normal (no `.`, `..`, `//` or trailing slash), else undefined. */
export function normalAbsolute(path: string): string | undefined {
  if (path.includes('\0') || !path.startsWith('/')) return undefined;
  const norm = resolve(path);
  return norm === path ? norm : undefined;
}

/**
 * Makes `path` the migration root: an existing folder the console made (it
 * holds `migration.json`) or an empty one, or a new folder in an existing
 * parent. Returns the real path (symlinks resolved).
 */
export function openRoot(path: string): string {
  const p = normalAbsolute(path);
  if (!p || p === '/') throw new Refused('invalid_request', 'the migration root must be an absolute, normal path other than /');
  if (!existsSync(p)) {
    if (!existsSync(dirname(p))) throw new Refused('not_found', `${dirname(p)} does not exist`);
    mkdirSync(p, { mode: 0o700 });
  }
  const real = realpathSync(p);
  if (!lstatSync(real).isDirectory()) throw new Refused('invalid_request', `${p} is not a directory`);
  const marker = join(real, ROOT_MARKER);
  if (!existsSync(marker)) {
    if (readdirSync(real).length > 0)
      throw new Refused('exists', `${p} holds files but no ${ROOT_MARKER}: pick an empty folder, or one this console made`);
    const identity = { format: 'parley-console-migration', version: 1, created_at: new Date().toISOString() };
    // The archive will hold plaintext credentials: the root is the operator's alone.
    chmodSync(real, 0o700);
    writeFileSync(marker, `${JSON.stringify(identity, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  }
  return real;
}

/** The folder of a saved plan, checked: a real directory directly in the root. */
export function planDir(root: string, planId: string): string {
  if (!PLAN_ID.test(planId)) throw new Refused('invalid_request', 'not a plan id');
  const dir = join(root, planId);
  if (!existsSync(dir)) throw new Refused('not_found', `no plan ${planId} in the migration root`);
  if (lstatSync(dir).isSymbolicLink() || !lstatSync(dir).isDirectory())
    throw new Refused('path_not_allowed', `${dir} is not a plan folder`);
  return dir;
}

/**
 * A workspace or archive path the page asked for: a direct child folder of
 * the plan's folder, named plainly, not one of the console's own files, and
 * not a symlink. Anything else is refused before a process starts.
 */
export function stageDir(dir: string, path: string, what: string): string {
  const p = normalAbsolute(path);
  if (!p) throw new Refused('path_not_allowed', `${what} must be an absolute, normal path`);
  if (dirname(p) !== dir) throw new Refused('path_not_allowed', `${what} ${p} is outside the plan's folder ${dir}`);
  const name = basename(p);
  if (!DIR_NAME.test(name) || RESERVED.has(name)) throw new Refused('path_not_allowed', `${what} ${p}: ${name} is not a stage folder name`);
  if (existsSync(p) && (lstatSync(p).isSymbolicLink() || !lstatSync(p).isDirectory()))
    throw new Refused('path_not_allowed', `${what} ${p} is not a directory`);
  return p;
}

/** A directory a probe may read: one of the plan's sources or targets, exactly. */
export function planDirectory(plan: Plan, path: string): string {
  const p = normalAbsolute(path.replace(/(.)\/+$/, '$1'));
  const own = [...plan.sources.map((s) => s.data_dir), ...plan.target.nodes.map((n) => n.data_dir)].map((d) => resolve(d));
  if (!p || !own.includes(p)) throw new Refused('path_not_allowed', `${path} is not one of the plan's source or target directories`);
  return p;
}

/** The saved plans' ids, in number order. */
export function planIds(root: string): string[] {
  return readdirSync(root)
    .filter((n) => PLAN_ID.test(n))
    .sort((a, b) => Number(a.slice(5)) - Number(b.slice(5)));
}

/**
 * The next unused folder name for a stage: `base` itself first when
 * `unnumbered`, then `base-2`, `base-3`, … (numbered ones start at `base-1`).
 */
export function nextName(dir: string, base: string, unnumbered: boolean): string {
  if (unnumbered && !existsSync(join(dir, base))) return join(dir, base);
  for (let n = unnumbered ? 2 : 1; ; n++) if (!existsSync(join(dir, `${base}-${n}`))) return join(dir, `${base}-${n}`);
}
