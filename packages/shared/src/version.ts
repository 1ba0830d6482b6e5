import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

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

/** `dist/build-info.json`: what the build was compiled from. */
const BuildInfo = Type.Object({ commit: Type.String(), build_time: Type.String(), build_origin: Type.String() });
const PackageJson = Type.Object({ version: Type.String() });

/** A JSON file of this package, checked against `schema`. */
function readChecked<S extends TSchema>(schema: S, file: string): Static<S> {
  const value: unknown = JSON.parse(readFileSync(file, 'utf8'));
  if (!Value.Check(schema, value)) throw new Error(`${file} is not what the build wrote; rebuild with \`npm run build\``);
  return value;
}

/** Version, commit and build time of this build; `parley` and `parleyctl` report the same values. */
export function versionInfo(): VersionInfo {
  const pkg = readChecked(PackageJson, join(here, '..', 'package.json'));
  if (existsSync(BUILD_INFO)) {
    const build = readChecked(BuildInfo, BUILD_INFO);
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
