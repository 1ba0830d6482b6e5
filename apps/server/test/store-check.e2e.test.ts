import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SOURCE_NODE_ARGS } from '../../../test-support/source-node.ts';
import { PARLEY_BIN, spawnServer, storeToken, tempDir, testEnv } from './helpers.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function parley(args: string[], env: Record<string, string>) {
  const r = spawnSync(process.execPath, [...SOURCE_NODE_ARGS, PARLEY_BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A stopped server's data directory holding a few rows. */
async function populatedDir(): Promise<string> {
  const dir = tempDir();
  dirs.push(dir);
  const s = await spawnServer(testEnv(dir));
  for (let i = 0; i < 50; i++) await storeToken(s.api, `user-${i}`, `token-${i}`);
  s.proc.kill('SIGTERM');
  expect(await s.exited).toBe(0);
  expect(existsSync(join(dir, 'parley.db-wal'))).toBe(false);
  return dir;
}

describe('parley store check and the start-up check', { timeout: 30_000 }, () => {
  it('reports a healthy store as ok', async () => {
    const dir = await populatedDir();
    const r = parley(['store', 'check'], testEnv(dir));
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ path: join(dir, 'parley.db'), ok: true, problems: [] });
  });

  it('finds a damaged page, and the server refuses to start on it, naming the path', async () => {
    const dir = await populatedDir();
    const db = join(dir, 'parley.db');
    const pages = statSync(db).size / 4096;
    expect(pages).toBeGreaterThan(4);
    // Overwrite the b-tree header of the last page (a table or index page) with garbage.
    const fd = openSync(db, 'r+');
    writeSync(fd, Buffer.alloc(64, 0xee), 0, 64, (pages - 1) * 4096);
    closeSync(fd);

    const check = parley(['store', 'check'], testEnv(dir));
    expect(check.code).toBe(1);
    const report = JSON.parse(check.stdout);
    expect(report).toMatchObject({ path: db, ok: false });
    expect(report.problems.length).toBeGreaterThan(0);

    const start = parley(['start'], testEnv(dir));
    expect(start.code).toBe(1);
    expect(start.stderr).toContain(`store ${db} refused`);
    expect(start.stdout).not.toContain('listening');
  });

  it('refuses a file that is not a database at all, naming the path', async () => {
    const dir = await populatedDir();
    const db = join(dir, 'parley.db');
    const fd = openSync(db, 'r+');
    writeSync(fd, Buffer.from('this is not an SQLite file at all'), 0, 33, 0);
    closeSync(fd);
    const start = parley(['start'], testEnv(dir));
    expect(start.code).toBe(1);
    expect(start.stderr).toMatch(new RegExp(`store ${db} refused:\\n  - SQLITE_NOTADB`));
  });
});

describe('small CLI things', { timeout: 30_000 }, () => {
  it('knows --version, and config validate shows the effective node name and the keys without secrets', () => {
    expect(parley(['--version'], {}).stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    const secret = 'validate-secret-0123456789';
    const r = parley(['config', 'validate'], {
      PARLEY_NODE_ID: '7',
      PARLEY_API_KEYS: JSON.stringify([{ name: 'backend', secret, scopes: ['send'] }]),
    });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).config).toMatchObject({
      'node.name': 'node-7',
      'api.keys': 'backend (send)',
      'api.listen_addr': '0.0.0.0:5001',
    });
    expect(r.stdout).not.toContain(secret);
  });
});
