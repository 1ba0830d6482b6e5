/**
 * `parley start` as a child process (on the TypeScript sources, or the built
 * dist/), for tests that need a real server process (signals, exit codes, a
 * server beside the migrator's targets) rather than one in their own process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { listeningEventIn } from '@parley/shared';
import { SOURCE_NODE_ARGS } from './source-node.ts';

/** `apps/server/bin/parley.js`. */
export const PARLEY_BIN = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'apps', 'server', 'bin', 'parley.js');

export function tempDir(prefix = 'parley-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Env for a node on ephemeral loopback ports with its data in `dataDir`, logging nothing. */
export function testEnv(dataDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PARLEY_NODE_DATA_DIR: dataDir,
    PARLEY_API_LISTEN_ADDR: '127.0.0.1:0',
    PARLEY_GATEWAY_WS_ADDR: '127.0.0.1:0',
    PARLEY_GATEWAY_TCP_ADDR: '127.0.0.1:0',
    PARLEY_LOG_LEVEL: 'silent',
    ...extra,
  };
}

/** How a test starts `parley`: on the TypeScript sources (the default), or `compiled`: the built dist/ with no loader. */
export interface StartOptions {
  compiled?: boolean;
  /** A command that runs node and execs it, with its arguments (e.g. `['taskset', '-c', '0']`: the pid stays node's). */
  wrap?: readonly string[];
}

function start(env: Record<string, string>, options: StartOptions = {}): ChildProcess {
  const node = [process.execPath, ...(options.compiled ? [] : SOURCE_NODE_ARGS), PARLEY_BIN, 'start'];
  const [cmd, ...args] = [...(options.wrap ?? []), ...node];
  return spawn(cmd!, args, {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

export interface SpawnedServer {
  proc: ChildProcess;
  api: string;
  ws: string;
  /** `tcp://host:port` of the WKProto TCP listener. */
  tcp: string;
  /** Everything the process wrote to stderr (its log) so far. */
  stderr(): string;
  /** Resolves when the process has exited. */
  exited: Promise<number | null>;
  /** SIGTERM, then waits for the exit (SIGKILL after 10 s). */
  stop(): Promise<number | null>;
}

/** Starts `parley start`; resolves once it prints its `listening` line (fails after 20 s or when it exits first). */
export function spawnServer(env: Record<string, string>, options: StartOptions = {}): Promise<SpawnedServer> {
  const proc = start(env, options);
  let err = '';
  let out = '';
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((done) => proc.on('exit', (code) => done(code)));
  const stop = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return exited;
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
    const code = await exited;
    clearTimeout(timer);
    return code;
  };
  return new Promise((done, fail) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      fail(new Error(`server did not start:\n${err}`));
    }, 20_000);
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const ev = listeningEventIn(out);
      if (!ev) return;
      clearTimeout(timer);
      done({ proc, api: `http://${ev.api}`, ws: `ws://${ev.ws}`, tcp: `tcp://${ev.tcp}`, stderr: () => err, exited, stop });
    });
    void exited.then((code) => {
      clearTimeout(timer);
      fail(new Error(`server exited (${code}) before listening:\n${err}`));
    });
  });
}

/** Runs `parley start` to its end (killed after 20 s), for starts that must be refused. */
export function runToExit(env: Record<string, string>): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const proc = start(env);
  let stderr = '';
  let stdout = '';
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  proc.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  const timer = setTimeout(() => proc.kill('SIGKILL'), 20_000);
  return new Promise((done) =>
    proc.on('exit', (code) => {
      clearTimeout(timer);
      done({ code, stderr, stdout });
    }),
  );
}
