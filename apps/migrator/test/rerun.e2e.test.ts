import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readPostgresImportMarks } from '@parley/store';
import { createTestSchema, postgresReachable } from '@parley/store/testing';
import { runToExit } from '../../../test-support/parley.ts';
import { SOURCE_NODE_ARGS } from '../../../test-support/source-node.ts';
import { targetEnv } from './served.ts';
import { copyDatadir, hasFixture, PARLEYCTL, parleyctl, tempRoot, writePlan } from './helpers.ts';

const NAME = 'holdout-closed';

/** Runs `parleyctl <args>` and kills it (SIGKILL) as soon as its stderr matches `when`; resolves with what it printed. */
function killWhen(args: string[], when: RegExp): Promise<{ signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [...SOURCE_NODE_ARGS, PARLEYCTL, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    proc.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (when.test(stderr)) proc.kill('SIGKILL');
    });
    proc.on('error', reject);
    proc.on('exit', (_code, signal) => resolve({ signal, stderr }));
  });
}

describe.runIf(hasFixture(NAME))('a killed export or import, run again with the same command', () => {
  const root = tempRoot();
  const plan = writePlan(root, copyDatadir(NAME, root));
  const ws = join(root, 'ws-prepare');
  const archive = join(root, 'archive');
  const target = join(root, 'target');
  const importWs = join(root, 'ws-import');

  it('export: the rerun discards the interrupted archive and completes it', async () => {
    expect((await parleyctl(['migrate', 'prepare', '--plan', plan, '--workspace', ws])).code).toBe(0);
    const args = ['migrate', 'export', '--plan', plan, '--workspace', ws, '--archive', archive];
    const killed = await killWhen(args, /export: copying \d+ record files/);
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    // killed mid-run: the archive exists, unfinished
    expect(existsSync(archive)).toBe(true);
    expect(existsSync(join(archive, 'COMPLETE'))).toBe(false);
    const again = await parleyctl(args);
    expect(again.code, again.stdout).toBe(0);
    expect(again.report.complete).toBe(true);
    expect(again.stderr).toMatch(/discarding the interrupted export/);
    expect(readdirSync(archive)).not.toContain('.parley-export-partial');
    // and once more: the finished archive is rechecked, not written again
    const third = await parleyctl(args);
    expect(third.code, third.stdout).toBe(0);
    expect(third.report.reused).toBe(true);
  }, 120_000);

  it('import: the server refuses the half-built directory; the rerun completes it and verify passes', async () => {
    const args = ['migrate', 'import', '--plan', plan, '--workspace', importWs, '--archive', archive];
    const killed = await killWhen(args, /import: 2000 messages/);
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    const partial = join(root, '.target.importing');
    expect(existsSync(partial)).toBe(true);
    expect(existsSync(target)).toBe(false);
    const refused = await runToExit(targetEnv(partial, 7, 'parley-test'));
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/import that did not complete/);
    expect(existsSync(join(partial, 'started.json'))).toBe(false);
    const again = await parleyctl(args);
    expect(again.code, again.stdout).toBe(0);
    expect(again.report.status).toBe('imported');
    expect(again.stderr).toMatch(/reusing the workspace of an interrupted import/);
    expect(again.stderr).toMatch(/discarding the interrupted import/);
    expect(existsSync(partial)).toBe(false);
    const ver = await parleyctl(['migrate', 'verify', '--plan', plan, '--workspace', join(root, 'ws-verify'), '--archive', archive]);
    expect(ver.code, ver.stdout).toBe(0);
    expect(ver.report.status).toBe('offline_verified');
  }, 120_000);
});

const pgUp = hasFixture(NAME) ? await postgresReachable() : false;

describe.runIf(hasFixture(NAME) && pgUp)('a killed import into PostgreSQL, run again with the same command', () => {
  const root = tempRoot();
  const schema = createTestSchema('parley_rerun');
  const target = join(root, 'target');
  const plan = writePlan(root, copyDatadir(NAME, root), {
    target: {
      cluster_id: 'parley-test',
      created_at: '2026-05-01T00:00:00Z',
      slot_count: 12,
      hash_slot_count: 256,
      replicas: 1,
      channel_replicas: 1,
      nodes: [{ node_id: 7, addr: '127.0.0.1:11110', data_dir: target }],
      store: { driver: 'postgres', postgres_url: schema.url },
    },
  });
  const archive = join(root, 'archive');
  afterAll(() => schema.drop());

  it('a node refuses the interrupted schema; the rerun drops it, imports again and verify passes', async () => {
    expect((await parleyctl(['migrate', 'prepare', '--plan', plan, '--workspace', join(root, 'ws')])).code).toBe(0);
    expect((await parleyctl(['migrate', 'export', '--plan', plan, '--workspace', join(root, 'ws'), '--archive', archive])).code).toBe(0);
    const args = ['migrate', 'import', '--plan', plan, '--workspace', join(root, 'ws-import'), '--archive', archive];
    const killed = await killWhen(args, /import: 2000 messages/);
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    // killed mid-run: the schema holds part of the rows and the partial mark; no node directory yet
    const marks = await readPostgresImportMarks(schema.url);
    expect(marks.partial).toBeDefined();
    expect(marks.finished).toBeUndefined();
    expect(existsSync(target)).toBe(false);
    // A node pointed at the half-filled schema refuses it.
    const refused = await runToExit(
      targetEnv(join(root, 'other-node'), 7, 'parley-test', { PARLEY_STORE_DRIVER: 'postgres', PARLEY_STORE_POSTGRES_URL: schema.url }),
    );
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/holds a parleyctl import that did not complete/);
    const again = await parleyctl(args);
    expect(again.code, again.stdout).toBe(0);
    expect(again.report.status).toBe('imported');
    expect(again.stderr).toMatch(/discarding the interrupted import in schema parley_rerun_\w+/);
    expect((await readPostgresImportMarks(schema.url)).partial).toBeUndefined();
    const ver = await parleyctl(['migrate', 'verify', '--plan', plan, '--workspace', join(root, 'ws-verify'), '--archive', archive]);
    expect(ver.code, ver.stdout).toBe(0);
    expect(ver.report.status).toBe('offline_verified');
  }, 180_000);
});
