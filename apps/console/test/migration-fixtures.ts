import { cpSync, existsSync, mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plan } from '@parley/shared';
import { fixturesPresent, V2_FIXTURES_DIR } from '../../../test-support/fixtures.ts';
import { SOURCE_NODE_ARGS } from '../../../test-support/source-node.ts';
import type { ToolCommand } from '../host/migration/tool.ts';

/** `parleyctl` on the TypeScript sources, as the console host runs it in the tests. */
export const PARLEYCTL: ToolCommand = {
  command: process.execPath,
  args: [...SOURCE_NODE_ARGS, fileURLToPath(new URL('../../migrator/bin/parleyctl.js', import.meta.url))],
};

/**
 * Whether fixture `name` can be read: false in a plain clone (the test
 * skips), a failure under CI or when one fixture of a present folder is missing.
 */
export function hasV2Fixture(name: string): boolean {
  if (!fixturesPresent(V2_FIXTURES_DIR)) return false;
  if (!existsSync(join(V2_FIXTURES_DIR, name, 'datadir'))) throw new Error(`fixture ${name} is missing from ${V2_FIXTURES_DIR}`);
  return true;
}

/** A temp folder (real path) holding a copy of fixture `name`'s data dir at `<tmp>/v2-<name>`. */
export function copyFixture(name: string): { tmp: string; source: string } {
  const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'parley-wizard-')));
  const source = join(tmp, `v2-${name}`);
  cpSync(join(V2_FIXTURES_DIR, name, 'datadir'), source, { recursive: true });
  return { tmp, source };
}

/** A one-node plan of `source` into `<tmp>/targets/node-<id>`. */
export function onePlan(tmp: string, source: string, targetDir = join(tmp, 'targets', 'node-7')): Plan {
  return {
    version: 1,
    sources: [{ node_id: 1, data_dir: source, shard_count: 8 }],
    target: {
      cluster_id: 'parley-wizard',
      created_at: '2026-05-01T00:00:00Z',
      slot_count: 12,
      hash_slot_count: 256,
      replicas: 1,
      channel_replicas: 1,
      nodes: [{ node_id: 7, addr: '127.0.0.1:11110', data_dir: targetDir }],
    },
  };
}
