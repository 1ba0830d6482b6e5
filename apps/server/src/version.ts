import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

export interface VersionInfo {
  name: string;
  version: string;
  /** Git commit of the running source, or `unknown` outside a checkout. */
  commit: string;
  /** Time of that commit (ISO 8601): Parley runs from source, so the commit is the build. */
  build_time: string;
  /**
   * Where this build came from: `source checkout` (a git work tree, with
   * `+dirty` when it has uncommitted changes) or `source tree` (no git).
   */
  build_origin: string;
}

function git(args: string[]): string | undefined {
  try {
    return execFileSync('git', ['-C', here, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

function origin(): string {
  const status = git(['status', '--porcelain', '--untracked-files=no']);
  if (status === undefined) return 'source tree';
  return status === '' ? 'source checkout' : 'source checkout+dirty';
}

/** Version, commit and build time of this build; `parley` and `parleyctl` report the same values. */
export function versionInfo(): VersionInfo {
  const pkg = JSON.parse(readFileSync(join(here, '..', 'package.json'), 'utf8')) as { version: string };
  return {
    name: 'parley',
    version: pkg.version,
    commit: git(['rev-parse', 'HEAD']) ?? 'unknown',
    build_time: git(['log', '-1', '--format=%cI']) ?? 'unknown',
    build_origin: origin(),
  };
}
