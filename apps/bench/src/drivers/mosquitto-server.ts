/**
 * Our own mosquitto (Debian's package; installed with apt-get when missing)
 * on a free loopback port, pinned to the server core, from a generated config:
 * password authentication (PBKDF2-SHA512 entries written by us, as
 * mosquitto_passwd would), persistence off, big offline queues for S3 and
 * an inflight window the size of Parley's catch-up page.
 */
import process from 'node:process';
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { pbkdf2Sync, randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { spawnTracked, stopChild } from '../children.ts';
import { pinned } from '../pinning.ts';
import { sleep } from '../stats.ts';

/** The mosquitto binary, installing Debian's package when it is missing; throws when that fails. */
export function ensureMosquitto(log: (line: string) => void): string {
  const find = (): string | undefined => {
    for (const p of ['/usr/sbin/mosquitto', '/usr/bin/mosquitto', '/usr/local/sbin/mosquitto']) {
      try {
        execFileSync(p, ['-h'], { stdio: 'ignore' });
        return p;
      } catch (e) {
        // `mosquitto -h` exits 3 after printing its help: it exists.
        if ((e as { status?: number }).status !== undefined && (e as { code?: string }).code !== 'ENOENT') return p;
      }
    }
    return undefined;
  };
  const found = find();
  if (found) return found;
  log('mosquitto not found: installing Debian package mosquitto with apt-get');
  const sudo = process.getuid?.() === 0 ? [] : ['sudo', '-n'];
  const run = (args: string[]): void => {
    const [cmd, ...rest] = [...sudo, ...args];
    execFileSync(cmd!, rest, { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  };
  run(['apt-get', 'update', '-qq']);
  run(['apt-get', 'install', '-y', '-qq', '--no-install-recommends', 'mosquitto']);
  const installed = find();
  if (!installed) throw new Error('mosquitto is not installed and apt-get could not install it');
  return installed;
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

/** A password file line mosquitto 2 accepts (`$7$`: PBKDF2-SHA512, 101 iterations, 12-byte salt). */
export function passwordLine(user: string, password: string): string {
  const salt = randomBytes(12);
  const hash = pbkdf2Sync(password, salt, 101, 64, 'sha512');
  return `${user}:$7$101$${salt.toString('base64')}$${hash.toString('base64')}\n`;
}

/** A running mosquitto of ours. */
export interface MosquittoServer {
  proc: ChildProcess;
  pid: number;
  port: number;
  /** Adds users to the password file and makes mosquitto reload it (SIGHUP). */
  addUsers(entries: ReadonlyArray<[string, string]>): Promise<void>;
  stop(): Promise<void>;
}

/**
 * mosquitto's inflight window (`max_inflight_messages`): QoS 1 messages sent to
 * one client before their PUBACKs. Its default is 20; see the config below.
 */
export const MOSQUITTO_INFLIGHT = 100;

/** Starts mosquitto on core 0; resolves once its port accepts connections. */
export async function startMosquitto(binary: string): Promise<MosquittoServer> {
  const dir = mkdtempSync(join(tmpdir(), 'parley-bench-mosquitto-'));
  const port = await freePort();
  const passwd = join(dir, 'passwd');
  writeFileSync(passwd, passwordLine('bench-admin', randomBytes(8).toString('hex')), { mode: 0o600 });
  const conf = join(dir, 'mosquitto.conf');
  writeFileSync(
    conf,
    [
      `listener ${port} 127.0.0.1`,
      'allow_anonymous false',
      `password_file ${passwd}`,
      // Run as the invoking user: as root, mosquitto would otherwise switch to
      // user "mosquitto", which cannot read our private temp dir.
      `user ${userInfo().username}`,
      'persistence false',
      'max_queued_messages 200000',
      // QoS 1 messages sent to one client before its PUBACKs (default 20): 100, the rows Parley's
      // catch-up moves per round trip (one /channel/messagesync page), so that both targets catch up
      // in batches of the same size (see README, S3). Only S3's persistent sessions come near it.
      `max_inflight_messages ${MOSQUITTO_INFLIGHT}`,
      'log_dest stderr',
      'log_type error',
      '',
    ].join('\n'),
  );
  const [cmd, args] = pinned(0, binary, ['-c', conf]);
  const proc = spawnTracked(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-8192)));
  for (let i = 0; i < 100; i++) {
    if (proc.exitCode !== null) throw new Error(`mosquitto exited (${proc.exitCode}):\n${err}`);
    const up = await new Promise<boolean>((resolve) => {
      const s = createConnection({ host: '127.0.0.1', port }, () => {
        s.destroy();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (up) break;
    await sleep(50);
  }
  return {
    proc,
    pid: proc.pid!,
    port,
    async addUsers(entries) {
      appendFileSync(passwd, entries.map(([u, p]) => passwordLine(u, p)).join(''));
      proc.kill('SIGHUP');
      await sleep(300);
    },
    async stop() {
      await stopChild(proc);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
