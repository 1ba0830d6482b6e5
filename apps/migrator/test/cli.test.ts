import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SOURCE_NODE_ARGS } from '../../../test-support/source-node.ts';
import { fixtureDir, hasFixture, parleyctl } from './helpers.ts';

describe('parleyctl version and db info', () => {
  it('prints the same version, commit and build time as `parley version`', async () => {
    const ctl = await parleyctl(['version', '--output', 'json']);
    const server = spawnSync(
      process.execPath,
      [...SOURCE_NODE_ARGS, join(import.meta.dirname, '..', '..', 'server', 'bin', 'parley.js'), 'version', '--output', 'json'],
      { encoding: 'utf8' },
    );
    expect(ctl.code).toBe(0);
    expect(ctl.report).toEqual(JSON.parse(server.stdout));
    expect(ctl.report.commit).toMatch(/^[0-9a-f]{40}$|^unknown$/);
  }, 30_000);

  it.runIf(hasFixture('basic-closed'))(
    'reports the format major version of a Pebble dir and of a v2 data dir',
    async () => {
      const shard = await parleyctl(['db', 'info', join(fixtureDir('basic-closed'), 'datadir', 'db', 'wukongimdb', 'shard000')]);
      expect(shard.report).toMatchObject({ kind: 'pebble', format_major_version: 14, supported: true });
      const v2 = await parleyctl(['db', 'info', join(fixtureDir('basic-closed'), 'datadir')]);
      expect(v2.report.kind).toBe('v2_data_dir');
      expect(v2.report.shards).toHaveLength(8);
      const none = await parleyctl(['db', 'info', '/nonexistent-parley-dir']);
      expect(none.code).toBe(1);
    },
    30_000,
  );

  it('refuses a Parley data dir whose marker is not what parleyctl writes, naming the file and the field', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'parleyctl-dbinfo-'));
    writeFileSync(join(dir, 'data-format.json'), '{"data_format":"one"}\n');
    const r = await parleyctl(['db', 'info', dir]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`${join(dir, 'data-format.json')} is not what this tool wrote`);
    expect(r.stderr).toContain('/data_format');
  }, 30_000);
});
