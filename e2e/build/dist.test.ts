/**
 * The installed product: the bins run the compiled JavaScript in dist/ (built
 * by `npm run build`, which `npm ci` runs), with no TypeScript loader, and the
 * migrator's worker threads start from dist/ too. Everything else in the suite
 * runs the sources; this file checks what an operator actually starts.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { get, post } from '../../test-support/http.ts';
import { spawnServer, testEnv } from '../../test-support/parley.ts';

const ROOT = resolve(import.meta.dirname, '..', '..');
const PARLEY = join(ROOT, 'apps', 'server', 'bin', 'parley.js');
const PARLEYCTL = join(ROOT, 'apps', 'migrator', 'bin', 'parleyctl.js');
const MIGRATOR_DIST = join(ROOT, 'apps', 'migrator', 'dist');

const temp = mkdtempSync(join(tmpdir(), 'parley-dist-test-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

/** Runs `node args` with no loader and no inherited Node options; stdout and stderr as text. */
function node(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, args, {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    timeout: 20_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Runs `code` as an ES module file (worker threads refuse an inherited `--input-type`). */
function script(name: string, code: string): { code: number | null; stdout: string; stderr: string } {
  const file = join(temp, `${name}.mjs`);
  writeFileSync(file, code);
  return node([file]);
}

describe('the bins, from dist/', () => {
  it('`parley version` and `parleyctl version` report the same build', () => {
    const server = node([PARLEY, 'version', '--output', 'json']);
    const ctl = node([PARLEYCTL, 'version', '--output', 'json']);
    expect(server.stderr).toBe('');
    expect(server.code).toBe(0);
    expect(ctl.code).toBe(0);
    const info = JSON.parse(server.stdout) as { build_origin: string; commit: string };
    expect(JSON.parse(ctl.stdout)).toEqual(info);
    // `build…` comes only from dist/build-info.json, written by the build; the sources say `source…`.
    expect(info.build_origin).toMatch(/^build/);
    expect(info.commit).toMatch(/^[0-9a-f]{40}$|^unknown$/);
  });

  it('`parley start` serves a message end to end and stops on SIGTERM', async () => {
    const server = await spawnServer(testEnv(join(temp, 'node'), { PARLEY_LOG_LEVEL: 'warn' }), { compiled: true });
    try {
      expect((await get(server.api, '/healthz')).status).toBe(200);
      expect((await post(server.api, '/user/token', { uid: 'alice', token: 'a-token', device_flag: 1 })).status).toBe(200);
      const payload = Buffer.from(JSON.stringify({ type: 1, content: 'from dist' })).toString('base64');
      const sent = await post(server.api, '/message/send', { from_uid: 'alice', channel_id: 'bob', channel_type: 1, payload });
      expect(sent.status).toBe(200);
      const synced = await post(server.api, '/channel/messagesync', {
        login_uid: 'bob',
        channel_id: 'alice',
        channel_type: 1,
        pull_mode: 1,
      });
      expect(synced.status).toBe(200);
      expect((synced.json.messages as { payload: string }[]).map((m) => m.payload)).toEqual([payload]);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  it('`parleyctl console` serves the built console on loopback, behind its launch token, and stops on SIGTERM', async () => {
    const proc = spawn(process.execPath, [PARLEYCTL, 'console', '--no-open', '--listen', '127.0.0.1:0'], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((done) => proc.on('exit', (code) => done(code)));
    try {
      const url = await new Promise<string>((done, fail) => {
        let out = '';
        proc.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          const line = out.split('\n').find((l) => l.includes('"event":"console"'));
          if (line) done((JSON.parse(line) as { url: string }).url);
        });
        void exited.then((code) => fail(new Error(`parleyctl console exited (${code}):\n${stderr}`)));
      });
      const { origin } = new URL(url);
      expect((await fetch(`${origin}/overview`)).status).toBe(401);
      const login = await fetch(url, { redirect: 'manual' });
      expect(login.status).toBe(302);
      const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
      const page = await fetch(`${origin}/overview`, { headers: { cookie } });
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<div id="root">');
    } finally {
      proc.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });

  it('`parleyctl` says how to build when dist/ is missing', () => {
    const copy = join(temp, 'unbuilt');
    const bin = join(copy, 'bin', 'parleyctl.js');
    spawnSync('mkdir', ['-p', join(copy, 'bin')]);
    writeFileSync(
      join(copy, 'package.json'),
      JSON.stringify({ name: '@parley/migrator', type: 'module', exports: { './cli': './dist/cli.js' } }),
    );
    spawnSync('cp', [PARLEYCTL, bin]);
    const r = node([bin, 'version']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('parleyctl: dist/ has not been built; run `npm run build` at the repository root\n');
  });
});

describe('the migrator worker threads, from dist/', () => {
  it.runIf(availableParallelism() > 1)('scan workers load the compiled reader', () => {
    const r = script(
      'scan',
      `const { scanWorkersReady } = await import(${JSON.stringify(join(MIGRATOR_DIST, 'v2', 'scan-pool.js'))});
      process.stdout.write(String(await scanWorkersReady())); process.exit(0);`,
    );
    expect(r.stderr).toBe('');
    expect(Number(r.stdout)).toBe(Math.min(availableParallelism(), 4));
  });

  it('the hashing thread runs from its copied plain-JavaScript module', () => {
    const file = join(temp, 'hash-me');
    writeFileSync(file, 'parley\n'.repeat(1000));
    const r = script(
      'hash',
      `import { Worker } from 'node:worker_threads';
      const w = new Worker(${JSON.stringify(join(MIGRATOR_DIST, 'archive', 'hash-worker.js'))});
      w.on('message', (m) => { process.stdout.write(JSON.stringify(m)); process.exit(0); });
      w.postMessage({ id: 1, files: [${JSON.stringify(file)}], lines: true });`,
    );
    expect(r.stderr).toBe('');
    const sha256 = createHash('sha256').update('parley\n'.repeat(1000)).digest('hex');
    expect(JSON.parse(r.stdout)).toEqual({ id: 1, digests: [{ sha256, bytes: 7000, count: 1000 }] });
  });
});
