#!/usr/bin/env node
/**
 * Rebuilds better-sqlite3's native module from the SQLite it ships, with one
 * change to SQLite's page cache (README.md, index.cjs). The source id gains
 * ` parley-pcache1`, which is how the store tells the build in use.
 *
 * Built in build/ of this package from a copy of better-sqlite3's own sources
 * with `node-gyp rebuild --sqlite3=<patched amalgamation>`, the option
 * better-sqlite3's build has for a custom SQLite. That option drops the
 * compile options better-sqlite3 gives its own SQLite (deps/defines.gypi), so
 * they are written at the top of the patched amalgamation: the two builds
 * differ in the change alone. Only a module that built replaces
 * node_modules/better-sqlite3/build/Release/better_sqlite3.node, by a rename,
 * so a failure at any step leaves the stock module in place and says why. A
 * stamp beside the module (`parley-sqlite.json`) skips the rebuild while it
 * matches the patched source and better-sqlite3's version.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const { definesOf, patchAmalgamation, tagSourceId } = require('./index.cjs');
const here = dirname(fileURLToPath(import.meta.url));
const work = join(here, 'build');

function say(text) {
  process.stderr.write(`@parley/sqlite-build: ${text}\n`);
}

function main() {
  let pkg;
  try {
    pkg = dirname(require.resolve('better-sqlite3/package.json'));
  } catch (err) {
    say(`better-sqlite3 is not installed (${err.message}); nothing to build`);
    return;
  }
  const keep = (why) => say(`${why}; better-sqlite3's module is left as it was (the stock one after a fresh install)`);
  const version = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')).version;
  const module = join(pkg, 'build', 'Release', 'better_sqlite3.node');
  const stampFile = join(pkg, 'build', 'Release', 'parley-sqlite.json');
  const sources = join(pkg, 'deps', 'sqlite3');
  const c = patchAmalgamation(readFileSync(join(sources, 'sqlite3.c'), 'utf8'));
  if (c.text === undefined) return keep(`${join(sources, 'sqlite3.c')}: ${c.reason}`);
  const h = tagSourceId(readFileSync(join(sources, 'sqlite3.h'), 'utf8'));
  if (h === undefined) return keep(`${join(sources, 'sqlite3.h')}: no SQLITE_SOURCE_ID to tag`);
  const gypi = join(pkg, 'deps', 'defines.gypi');
  const defines = definesOf(readFileSync(gypi, 'utf8'));
  if (defines.length === 0) return keep(`${gypi} holds no defines`);
  const amalgamationText = `${defines.map(([name, value]) => `#define ${name} ${value}\n`).join('')}${c.text}`;
  const stamp = {
    betterSqlite3: version,
    source: createHash('sha256')
      .update(amalgamationText)
      .update(h)
      .update(readFileSync(fileURLToPath(import.meta.url)))
      .digest('hex'),
  };
  if (existsSync(module) && existsSync(stampFile)) {
    try {
      const old = JSON.parse(readFileSync(stampFile, 'utf8'));
      if (old.betterSqlite3 === stamp.betterSqlite3 && old.source === stamp.source) return;
    } catch {
      // An unreadable stamp: build again.
    }
  }
  const amalgamation = join(work, 'amalgamation');
  const tree = join(work, 'better-sqlite3');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(amalgamation, { recursive: true });
  writeFileSync(join(amalgamation, 'sqlite3.c'), amalgamationText);
  writeFileSync(join(amalgamation, 'sqlite3.h'), h);
  copyFileSync(join(sources, 'sqlite3ext.h'), join(amalgamation, 'sqlite3ext.h'));
  // Its package.json too: it has no "type", so the build's scripts (deps/copy.js) run as CommonJS.
  for (const part of ['package.json', 'binding.gyp', 'src', 'deps']) cpSync(join(pkg, part), join(tree, part), { recursive: true });
  // npm runs this with its node-gyp (npm_config_node_gyp) and the machine's header settings (npm_config_nodedir).
  const gyp = process.env.npm_config_node_gyp;
  const [cmd, args] = gyp ? [process.execPath, [gyp]] : ['node-gyp', []];
  say(`building better-sqlite3 ${version} with the patched SQLite (about a minute)`);
  try {
    // The compiler's output (better-sqlite3's own warnings, the same in its stock install) is shown only when the build fails.
    execFileSync(cmd, [...args, 'rebuild', '--release', '--loglevel=warn', `--sqlite3=${amalgamation}`], {
      cwd: tree,
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (err) {
    const output = `${err.stdout ?? ''}${err.stderr ?? ''}`.trim().split('\n').slice(-40).join('\n');
    if (output !== '') process.stderr.write(`${output}\n`);
    return keep(`the build failed (${err.message.split('\n')[0]})`);
  }
  const built = join(tree, 'build', 'Release', 'better_sqlite3.node');
  if (!existsSync(built)) return keep(`the build made no ${built}`);
  mkdirSync(dirname(module), { recursive: true });
  copyFileSync(built, `${module}.parley`);
  renameSync(`${module}.parley`, module);
  writeFileSync(stampFile, `${JSON.stringify(stamp)}\n`);
  say(`better-sqlite3 ${version} now runs the patched SQLite`);
}

try {
  main();
} finally {
  // The patched sources and the build tree are only needed while building.
  rmSync(work, { recursive: true, force: true });
}
