// Run by `npm run build` after tsc: records what the build was compiled from in
// dist/build-info.json, which `parley version` and `parleyctl version` report (a container image or
// a copied dist/ has no git checkout to ask). BUILD_COMMIT stands in for git where there is none
// (the Dockerfile passes it as a build argument).
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';

const root = new URL('..', import.meta.url);

function git(args) {
  try {
    return execFileSync('git', ['-C', root.pathname, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

const status = git(['status', '--porcelain', '--untracked-files=no']);
const info = {
  commit: git(['rev-parse', 'HEAD']) ?? process.env.BUILD_COMMIT ?? 'unknown',
  build_time: new Date().toISOString(),
  build_origin: status === undefined ? 'build' : status === '' ? 'build of a source checkout' : 'build of a source checkout+dirty',
};
writeFileSync(new URL('../dist/build-info.json', import.meta.url), `${JSON.stringify(info, null, 2)}\n`);
