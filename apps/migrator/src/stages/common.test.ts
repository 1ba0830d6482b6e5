import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ArchiveSeal, MigrationMarker } from '@parley/shared';
import { describe, expect, it } from 'vitest';
import { readJsonFile, StageError } from './common.ts';

const dir = mkdtempSync(join(tmpdir(), 'parleyctl-read-'));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const problems = (fn: () => unknown): string[] => {
  try {
    fn();
  } catch (err) {
    if (err instanceof StageError) return err.problems;
    throw err;
  }
  throw new Error('expected a StageError');
};

describe('readJsonFile', () => {
  it('returns a file that matches its schema, typed by it', () => {
    const seal = {
      plan_sha256: 'p',
      tool: { version: '0.1.0', commit: 'c' },
      selection_digest: 's',
      report_sha256: 'r',
      files: Object.fromEntries(
        [
          'credentials',
          'users',
          'channels',
          'members',
          'system_uids',
          'conversations',
          'messages',
          'tails',
          'archived',
          'excluded',
          'sequence_mapping',
          'duplicate_chain_proof',
        ].map((n) => [n, { sha256: 'x', count: 0, bytes: 0 }]),
      ),
      sources: [],
      plugin_artifacts: [],
    };
    expect(readJsonFile(ArchiveSeal, file('seal.json', JSON.stringify(seal))).files.messages.count).toBe(0);
  });

  it('refuses a file of another shape, naming the file and the field', () => {
    const marker = {
      identity: 'parley-migration',
      node_id: '7',
      cluster: {
        cluster_id: 'c',
        nodes: [{ node_id: 7, addr: '127.0.0.1:1' }],
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
      tool: { name: 'parleyctl', version: '0.1.0', commit: 'x' },
    };
    const path = file('migration.json', JSON.stringify(marker));
    const [p] = problems(() => readJsonFile(MigrationMarker, path));
    expect(p).toContain(`${path} is not what this tool wrote`);
    expect(p).toMatch(/\/node_id Expected integer/);
  });

  it('refuses a file that is not JSON, naming it', () => {
    const path = file('broken.json', '{"plan_sha256":');
    expect(problems(() => readJsonFile(ArchiveSeal, path))[0]).toContain(path);
  });
});
