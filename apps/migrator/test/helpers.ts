import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fixturesPresent, V2_FIXTURES_DIR } from '../../../test-support/fixtures.ts';

/** `shared/fixtures/v2` beside the repository (see test-support/fixtures.ts). */
export const FIXTURES = V2_FIXTURES_DIR;
export { PARLEYCTL } from '../../../test-support/parleyctl.ts';

export function fixtureDir(name: string): string {
  return join(FIXTURES, name);
}

/**
 * Whether the fixtures are there: false in a plain clone (the tests skip);
 * under CI a missing folder throws. One fixture missing from a folder that is
 * there throws everywhere: a test never skips quietly.
 */
export function hasFixture(name: string): boolean {
  if (!fixturesPresent(FIXTURES)) return false;
  if (!existsSync(join(fixtureDir(name), 'datadir'))) throw new Error(`fixture ${name} is missing from ${FIXTURES}`);
  return true;
}

export function tempRoot(prefix = 'parleyctl-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** SHA-256 over every file's path, size, mode and bytes: proves a tree was not touched. */
export function treeHash(root: string): string {
  const h = createHash('sha256');
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const full = join(dir, name);
      const st = statSync(full);
      h.update(`${relative(root, full)}\0${st.mode}\0${st.size}\0`);
      if (st.isDirectory()) walk(full);
      else h.update(readFileSync(full));
    }
  };
  walk(root);
  return h.digest('hex');
}

/** A single-node plan for `source` with everything else under `root`. */
export function writePlan(root: string, source: string, overrides: Record<string, unknown> = {}): string {
  const plan = {
    version: 1,
    sources: [{ node_id: 1, data_dir: source, shard_count: 8 }],
    target: {
      cluster_id: 'parley-test',
      created_at: '2026-05-01T00:00:00Z',
      slot_count: 12,
      hash_slot_count: 256,
      replicas: 1,
      channel_replicas: 1,
      nodes: [{ node_id: 7, addr: '127.0.0.1:11110', data_dir: join(root, 'target') }],
    },
    ...overrides,
  };
  const file = join(root, 'plan.json');
  writeFileSync(file, JSON.stringify(plan, null, 2));
  return file;
}

/** Copies a fixture's data dir (for tests that must hold its LOCK or change it). */
export function copyDatadir(name: string, root: string): string {
  const to = join(root, `${name}-copy`);
  cpSync(join(fixtureDir(name), 'datadir'), to, { recursive: true });
  return to;
}

export { parleyctl, type CliResult } from '../../../test-support/parleyctl.ts';

/** `expected.json` of a fixture. */
export function expected(name: string): any {
  return JSON.parse(readFileSync(join(fixtureDir(name), 'expected.json'), 'utf8'));
}
