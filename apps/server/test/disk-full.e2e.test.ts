import { execFileSync, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { listeningEventIn } from '@parley/shared';
import { SOURCE_NODE_ARGS } from '../../../test-support/source-node.ts';
import { waitFor } from './ops-helpers.ts';
import { connectRpc, get, PARLEY_BIN, storeToken, tempDir, testEnv } from './helpers.ts';

const dir = tempDir('parley-full-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * The server runs in a mount namespace of its own, with its data directory on
 * an 8 MiB tmpfs that only it sees (gone when it exits): the test fills that
 * disk for real, with `nsenter` into the namespace.
 */
describe('a full disk', { timeout: 60_000 }, () => {
  it('logs the real cause once, answers senders with a reason, turns readiness down, and recovers when space is freed', async () => {
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      ...testEnv(dir, { PARLEY_LOG_LEVEL: 'info' }),
      TMPFS_DIR: dir,
    };
    const script = 'mount -t tmpfs -o size=8m tmpfs "$TMPFS_DIR" && exec "$0" "$@"';
    const proc = spawn(
      'unshare',
      ['--mount', '--propagation', 'private', 'sh', '-c', script, process.execPath, ...SOURCE_NODE_ARGS, PARLEY_BIN, 'start'],
      { env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((resolve) => proc.on('exit', resolve));
    const inNamespace = (command: string) =>
      execFileSync('nsenter', ['--target', String(proc.pid), '--mount', '--', 'sh', '-c', command], { env: { ...env } });
    try {
      const ev = await waitFor(async () => listeningEventIn(out), 20_000);
      const api = `http://${ev.api}`;
      await storeToken(api, 'alice', 'tok-a');
      const c = await connectRpc(`ws://${ev.ws}`, 'alice', 'tok-a');
      const payload = { blob: 'x'.repeat(32_000) };

      // Fill the disk (dd stops with ENOSPC), then send until the store runs out of room.
      inNamespace('dd if=/dev/zero of="$TMPFS_DIR/filler" bs=64k 2>/dev/null || true');
      let failed: Record<string, unknown> | undefined;
      for (let i = 0; i < 200 && !failed; i++) {
        const r = (await c.request('send', { channelId: 'alice', channelType: 1, payload, clientMsgNo: `full-${i}` })).result as Record<
          string,
          unknown
        >;
        if (r.reasonCode !== 1) failed = r;
      }
      expect(failed).toMatchObject({ reasonCode: 15, messageId: '0' });
      // HTTP senders learn the kind too: SQLite's own error, not a failed rollback after it.
      const http = await fetch(`${api}/message/send`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          from_uid: 'alice',
          channel_id: 'alice',
          channel_type: 1,
          payload: Buffer.from(JSON.stringify(payload)).toString('base64'),
        }),
      });
      expect([http.status, await http.json()]).toEqual([503, { error: 'store writes failing (disk_full)', code: 'store_unavailable' }]);
      const down = await waitFor(async () => {
        const r = await get(api, '/readyz');
        return r.status === 503 ? r.json : undefined;
      });
      expect(down.reason).toMatch(/^channel not ready: store writes failing \(disk_full: SQLITE_FULL /);
      const failing = err.split('\n').filter((l) => l.includes('"msg":"store writes failing"'));
      // Once per failing spell: a write small enough to reuse space the files already hold (a probe's
      // one-row commit into a WAL restarted after a checkpoint) may succeed in between, ending the spell,
      // so the log reads failing, succeed again, failing, … and never two failing lines in a row.
      const spells = err
        .split('\n')
        .filter((l) => l.includes('"msg":"store writes failing"') || l.includes('"msg":"store writes succeed again"'))
        .map((l) => (l.includes('"msg":"store writes failing"') ? 'F' : 'S'))
        .join('');
      expect(spells).toMatch(/^(FS)*F?$/);
      expect(failing.length).toBeGreaterThan(0);
      expect(JSON.parse(failing[0]!)).toMatchObject({
        kind: 'disk_full',
        code: 'SQLITE_FULL',
        cause: expect.stringMatching(/ bytes free on the volume/),
      });
      expect(err).not.toContain('cannot rollback');

      inNamespace('rm -f "$TMPFS_DIR/filler"');
      await waitFor(async () => ((await get(api, '/readyz')).status === 200 ? true : undefined));
      expect(
        (
          (await c.request('send', { channelId: 'alice', channelType: 1, payload: { n: 1 }, clientMsgNo: 'after' })).result as {
            reasonCode: number;
          }
        ).reasonCode,
      ).toBe(1);
      c.close();
    } finally {
      proc.kill('SIGTERM');
      await exited;
    }
  });
});
