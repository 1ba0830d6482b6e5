import { execFileSync, spawn } from 'node:child_process';
import { rmSync, truncateSync, unlinkSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { listeningEventIn } from '@parley/shared';
import { JsonRpcClient } from '@parley/protocol/jsonrpc';
import { WkprotoClient, type DisconnectPacket } from '@parley/protocol/wkproto';
import { waitFor } from './ops-helpers.ts';
import { SOURCE_NODE_ARGS } from '../../../test-support/source-node.ts';
import { runToExit } from '../../../test-support/parley.ts';
import { connectRpc, get, spawnServer, storeToken, tempDir, testEnv, type SpawnedServer } from './helpers.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function infoEnv(dataDir: string, extra: Record<string, string> = {}) {
  return testEnv(dataDir, { PARLEY_LOG_LEVEL: 'info', ...extra });
}

async function started(env: Record<string, string>): Promise<SpawnedServer> {
  const s = await spawnServer(env);
  cleanups.push(async () => {
    if (s.proc.exitCode === null) {
      s.proc.kill('SIGKILL');
      await s.exited;
    }
  });
  return s;
}

/** True when nothing listens on the port any more (we can bind it ourselves). */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

describe('refused starts', { timeout: 30_000 }, () => {
  it('refuses an unauthenticated API on a non-loopback address, and starts once keys are configured', async () => {
    const dir = tempDir();
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const r = await runToExit(infoEnv(dir, { PARLEY_API_LISTEN_ADDR: '0.0.0.0:0' }));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/api.listen_addr 0.0.0.0 is not a loopback address and no api.keys are configured/);
    const keyed = await started(
      infoEnv(dir, {
        PARLEY_API_LISTEN_ADDR: '0.0.0.0:0',
        PARLEY_API_KEYS: JSON.stringify([{ name: 'b', secret: 'b'.repeat(20), scopes: ['read'] }]),
      }),
    );
    const port = new URL(keyed.api).port;
    expect((await fetch(`http://127.0.0.1:${port}/user/systemuids`)).status).toBe(401);
  });

  it('lets one server own a data directory: a second exits non-zero naming the holder’s pid', async () => {
    const dir = tempDir();
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const first = await started(infoEnv(dir));
    const second = await runToExit(infoEnv(dir));
    expect(second.code).not.toBe(0);
    expect(second.stderr).toContain(`data directory ${dir} is in use by another parley process (pid ${first.proc.pid})`);
    expect(second.stdout).not.toContain('listening');
    expect((await get(first.api, '/readyz')).status).toBe(200);
    first.proc.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    const third = await started(infoEnv(dir));
    expect((await get(third.api, '/healthz')).status).toBe(200);
  });

  it('refuses a data directory whose parley.db was emptied or removed, naming the path', async () => {
    const dir = tempDir();
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const s = await started(infoEnv(dir));
    await storeToken(s.api, 'alice', 'tok-a');
    s.proc.kill('SIGTERM');
    expect(await s.exited).toBe(0);
    const db = join(dir, 'parley.db');
    for (const side of ['-wal', '-shm']) if (existsSync(db + side)) unlinkSync(db + side);
    truncateSync(db, 0);
    const emptied = await runToExit(infoEnv(dir));
    expect(emptied.code).toBe(1);
    expect(emptied.stderr).toContain(`store ${db} refused`);
    expect(emptied.stderr).toMatch(/the database is empty \(0 bytes\)/);
    unlinkSync(db);
    const missing = await runToExit(infoEnv(dir));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/the database is missing/);
  });
});

describe('signals', { timeout: 30_000 }, () => {
  for (const [name, args] of [
    ['npm start', ['start']],
    ['npx parley start', ['exec', '--', 'parley', 'start']],
  ] as const) {
    it(`SIGTERM to \`${name}\` stops the server and frees its ports`, async () => {
      const dir = tempDir();
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      // The sources, not a dist/ that may be stale: the subject here is how npm passes the signal on.
      const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NODE_OPTIONS: SOURCE_NODE_ARGS.join(' '), ...testEnv(dir) };
      const npm = spawn('npm', [...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
      cleanups.push(() => {
        if (npm.exitCode === null) npm.kill('SIGKILL');
      });
      let out = '';
      npm.stdout.on('data', (d: Buffer) => (out += d.toString()));
      const ev = await waitFor(async () => listeningEventIn(out), 30_000);
      const ports = [ev.api, ev.ws, ev.tcp].map((a) => Number(a.split(':').pop()));
      for (const p of ports) expect(await portFree(p)).toBe(false);
      npm.kill('SIGTERM');
      for (const p of ports) await waitFor(async () => ((await portFree(p)) ? true : undefined), 15_000);
      // The data directory is free for the next server too.
      const next = await started(testEnv(dir));
      expect((await get(next.api, '/healthz')).status).toBe(200);
    });
  }

  it('tells each client before closing: disconnect first, then close 1001, and answers sends already queued', async () => {
    const dir = tempDir();
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const s = await started(infoEnv(dir));
    await storeToken(s.api, 'alice', 'tok-a');
    await storeToken(s.api, 'bob', 'tok-b');
    const c = await connectRpc(s.ws, 'alice', 'tok-a');
    const wk = new WkprotoClient({ url: s.ws, uid: 'bob', token: 'tok-b', deviceFlag: 1 });
    await wk.connect();
    const told = new Promise<DisconnectPacket>((resolve) => wk.on('disconnect', (p) => resolve(p as DisconnectPacket)));
    const sent = c.request('send', { channelId: 'alice', channelType: 1, payload: { type: 1, content: 'last words' }, clientMsgNo: 'x1' });
    s.proc.kill('SIGTERM');
    expect(await told).toMatchObject({ reasonCode: 15, reason: 'server shutting down' });
    expect((await sent).result).toMatchObject({ reasonCode: 1 });
    expect((await c.nextNotification('disconnect')).params).toEqual({ reasonCode: 15, reason: 'server shutting down' });
    expect((await c.closed).code).toBe(1001);
    expect(await s.exited).toBe(0);
  });
});

describe('a store that cannot be written', { timeout: 30_000 }, () => {
  it('turns /readyz not ready with the real cause in the log, answers senders with a reason, and is ready again after', async () => {
    const dir = tempDir();
    const files = [join(dir, 'parley.db'), join(dir, 'parley.db-wal')];
    cleanups.push(() => {
      execFileSync('chattr', ['-i', ...files.filter((f) => existsSync(f))]);
      rmSync(dir, { recursive: true, force: true });
    });
    const s = await started(infoEnv(dir));
    await storeToken(s.api, 'alice', 'tok-a');
    const c: JsonRpcClient = await connectRpc(s.ws, 'alice', 'tok-a');
    expect((await c.request('send', { channelId: 'alice', channelType: 1, payload: { n: 1 }, clientMsgNo: 'm1' })).result).toMatchObject({
      reasonCode: 1,
    });

    // Immutable: no process, not even root, can write these files, though the server holds them open.
    execFileSync('chattr', ['+i', ...files]);
    const failed = await c.request('send', { channelId: 'alice', channelType: 1, payload: { n: 2 }, clientMsgNo: 'm2' });
    expect(failed.result).toMatchObject({ reasonCode: 15, messageId: '0' });
    const http = await fetch(`${s.api}/message/send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ from_uid: 'alice', channel_id: 'alice', channel_type: 1, payload: Buffer.from('{"n":9}').toString('base64') }),
    });
    expect([http.status, await http.json()]).toEqual([503, { error: 'store writes failing (io_error)', code: 'store_unavailable' }]);
    const down = await waitFor(async () => {
      const r = await get(s.api, '/readyz');
      return r.status === 503 ? r.json : undefined;
    });
    expect(down).toMatchObject({ ready: false, parts: { channels: false, slots: true, routes: true } });
    expect(down.reason).toMatch(/^channel not ready: store writes failing \(io_error: SQLITE_IOERR_WRITE/);
    const failure = s
      .stderr()
      .split('\n')
      .filter((l) => l.includes('store writes failing'));
    expect(failure).toHaveLength(1);
    expect(JSON.parse(failure[0]!)).toMatchObject({
      level: 50,
      kind: 'io_error',
      code: 'SQLITE_IOERR_WRITE',
      path: files[0],
      cause: expect.stringContaining('EPERM: operation not permitted'),
    });
    expect(s.stderr()).not.toContain('cannot rollback');

    execFileSync('chattr', ['-i', ...files]);
    await waitFor(async () => ((await get(s.api, '/readyz')).status === 200 ? true : undefined));
    const recovered = await waitFor(async () =>
      s
        .stderr()
        .split('\n')
        .find((l) => l.includes('store writes succeed again')),
    );
    expect(JSON.parse(recovered)).toMatchObject({ level: 30, failures: { io_error: expect.any(Number) }, path: files[0] });
    // The same session is still open and sends again.
    expect((await c.request('send', { channelId: 'alice', channelType: 1, payload: { n: 3 }, clientMsgNo: 'm3' })).result).toMatchObject({
      reasonCode: 1,
    });
    c.close();
  });
});
