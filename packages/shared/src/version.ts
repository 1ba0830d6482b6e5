import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

export interface VersionInfo {
  name: string;
  version: string;
  /** Git commit of the build (or of the running source), or `unknown` outside a checkout. */
  commit: string;
  /** ISO 8601: when dist/ was built, or the commit's time when running from source. */
  build_time: string;
  /**
   * Where this build came from: `build of a source checkout` (compiled in a git
   * work tree, with `+dirty` when it had uncommitted changes) or `build` (no
   * git); from the TypeScript sources, `source checkout` (`+dirty`) or
   * `source tree`.
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

/** Written by `npm run build` beside the compiled modules (`scripts/build-info.js`); absent in src/. */
const BUILD_INFO = join(here, 'build-info.json');

/** Version, commit and build time of this build; `parley` and `parleyctl` report the same values. */
export function versionInfo(): VersionInfo {
  const pkg = JSON.parse(readFileSync(join(here, '..', 'package.json'), 'utf8')) as { version: string };
  if (existsSync(BUILD_INFO)) {
    const build = JSON.parse(readFileSync(BUILD_INFO, 'utf8')) as Pick<VersionInfo, 'commit' | 'build_time' | 'build_origin'>;
    return { name: 'parley', version: pkg.version, commit: build.commit, build_time: build.build_time, build_origin: build.build_origin };
  }
  return {
    name: 'parley',
    version: pkg.version,
    commit: git(['rev-parse', 'HEAD']) ?? 'unknown',
    build_time: git(['log', '-1', '--format=%cI']) ?? 'unknown',
    build_origin: origin(),
  };
}
