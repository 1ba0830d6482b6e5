import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { MigrationMarker } from '@parley/shared';
import { loadConfig } from '../config/config.ts';
import { DataDirError, prepareDataDir } from './data-dir.ts';

function marker(): MigrationMarker {
  return {
    identity: 'parley-migration',
    node_id: 3,
    cluster: {
      cluster_id: 'c1',
      nodes: [{ node_id: 3, addr: '127.0.0.1:1' }],
      initial_slot_count: 12,
      hash_slot_count: 256,
      slot_replica_n: 1,
      channel_replica_n: 1,
      created_at: '2026-05-01T00:00:00Z',
    },
    plan_sha256: 'p',
    archive_manifest_sha256: 'a',
    selection_digest: 's',
    content_sha256: 'c',
    imported_at: '2026-05-01T00:00:00Z',
    tool: { name: 'parleyctl', version: '0', commit: 'x' },
  };
}

describe('prepareDataDir', () => {
  it('writes a data-format file into a new directory and leaves plain dirs alone', () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-dd-'));
    const r = prepareDataDir(loadConfig(undefined, { PARLEY_NODE_DATA_DIR: join(dir, 'new') }));
    expect(r).toEqual({ imported: false, firstStart: false });
    expect(JSON.parse(readFileSync(join(dir, 'new', 'data-format.json'), 'utf8')).data_format).toBe(1);
  });

  it('refuses an imported directory whose config differs from the marker, naming every mismatch', () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-dd-'));
    writeFileSync(join(dir, 'migration.json'), JSON.stringify(marker()));
    const cfg = loadConfig(undefined, {
      PARLEY_NODE_DATA_DIR: dir,
      PARLEY_NODE_ID: '4',
      PARLEY_CLUSTER_ID: 'c2',
      PARLEY_CLUSTER_CHANNEL_REPLICA_N: '2',
    });
    expect(() => prepareDataDir(cfg)).toThrow(DataDirError);
    try {
      prepareDataDir(cfg);
    } catch (err) {
      expect((err as DataDirError).problems).toEqual([
        'node.id is 4 but the migration marker requires 3',
        'cluster.id is "c2" but the migration marker requires "c1"',
        'cluster.channel_replica_n is 2 but the migration marker requires 1',
      ]);
    }
    expect(existsSync(join(dir, 'started.json'))).toBe(false);
  });

  it('records the first start of a matching imported directory once', () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-dd-'));
    writeFileSync(join(dir, 'migration.json'), JSON.stringify(marker()));
    const cfg = loadConfig(undefined, { PARLEY_NODE_DATA_DIR: dir, PARLEY_NODE_ID: '3', PARLEY_CLUSTER_ID: 'c1' });
    expect(prepareDataDir(cfg)).toEqual({ imported: true, firstStart: true });
    const first = readFileSync(join(dir, 'started.json'), 'utf8');
    expect(prepareDataDir(cfg)).toEqual({ imported: true, firstStart: false });
    expect(readFileSync(join(dir, 'started.json'), 'utf8')).toBe(first);
  });

  it('refuses a directory an import is still building (its partial mark, or the .<name>.importing name)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-dd-'));
    writeFileSync(join(dir, '.parley-import-partial'), '{}');
    expect(() => prepareDataDir(loadConfig(undefined, { PARLEY_NODE_DATA_DIR: dir }))).toThrow(/import that did not complete/);
    expect(existsSync(join(dir, 'data-format.json'))).toBe(false);
    const named = join(mkdtempSync(join(tmpdir(), 'parley-dd-')), '.target.importing');
    expect(() => prepareDataDir(loadConfig(undefined, { PARLEY_NODE_DATA_DIR: named }))).toThrow(/import that did not complete/);
    expect(existsSync(named)).toBe(false);
  });
});
