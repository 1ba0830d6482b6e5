import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { JsonRpcClient } from '@parley/protocol/jsonrpc';
import { SOURCE_NODE_ARGS } from '../../../test-support/source-node.ts';
import { loadConfig } from '../src/config/config.ts';
import { createLogger } from '../src/log.ts';
import { startServer, type RunningServer } from '../src/server.ts';

const here = dirname(fileURLToPath(import.meta.url));
export const PARLEY_BIN = join(here, '..', 'bin', 'parley.js');

export function tempDir(prefix = 'parley-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Env for a node on ephemeral loopback ports with its data in `dataDir`. */
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

export interface TestServer {
  server: RunningServer;
  api: string;
  ws: string;
  /** `tcp://127.0.0.1:port` of the WKProto TCP listener. */
  tcp: string;
  dataDir: string;
  close(): Promise<void>;
}

/**
 * The real server in this process, on port 0, with a fresh temp data dir.
 * With `onLog`, every log line (at `PARLEY_LOG_LEVEL`) is handed to it.
 */
export async function startTestServer(extraEnv: Record<string, string> = {}, onLog?: (line: string) => void): Promise<TestServer> {
  const dataDir = tempDir();
  const config = loadConfig(undefined, testEnv(dataDir, extraEnv));
  const log = onLog ? createLogger(config.log.level, { write: (line: string) => onLog(line) }) : createLogger('silent');
  const server = await startServer(config, log);
  return {
    server,
    dataDir,
    api: `http://127.0.0.1:${server.addresses.api.port}`,
    ws: `ws://127.0.0.1:${server.addresses.ws.port}`,
    tcp: `tcp://127.0.0.1:${server.addresses.tcp.port}`,
    async close() {
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface SpawnedServer {
  proc: ChildProcess;
  api: string;
  ws: string;
  /** Everything the process wrote to stderr (its log) so far. */
  stderr(): string;
  /** Resolves when the process has exited. */
  exited: Promise<number | null>;
}

/** `parley start` as a child process on the TypeScript sources; resolves once it prints its `listening` line. */
export function spawnServer(env: Record<string, string>): Promise<SpawnedServer> {
  const proc = spawn(process.execPath, [...SOURCE_NODE_ARGS, PARLEY_BIN, 'start'], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  let out = '';
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`server did not start:\n${err}`));
    }, 20_000);
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.includes('"event":"listening"'));
      if (!line) return;
      clearTimeout(timer);
      const ev = JSON.parse(line) as { api: string; ws: string };
      resolve({ proc, api: `http://${ev.api}`, ws: `ws://${ev.ws}`, stderr: () => err, exited });
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code}) before listening:\n${err}`));
    });
  });
}

export interface HttpResult {
  status: number;
  text: string;
  json: any;
}

export async function post(api: string, path: string, body: unknown, raw = false): Promise<HttpResult> {
  const res = await fetch(api + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: raw ? (body as string) : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json };
}

export async function get(api: string, path: string): Promise<HttpResult> {
  const res = await fetch(api + path);
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json };
}

/** Stores a token over HTTP and asserts it was accepted. */
export async function storeToken(api: string, uid: string, token: string, deviceFlag = 1, deviceLevel = 0): Promise<void> {
  const r = await post(api, '/user/token', { uid, token, device_flag: deviceFlag, device_level: deviceLevel });
  if (r.status !== 200) throw new Error(`token not stored: ${r.status} ${r.text}`);
}

/** Opens a JSON-RPC session and connects it; throws unless the connect succeeds. */
export async function connectRpc(ws: string, uid: string, token: string, deviceFlag = 1, deviceId = `${uid}-dev`): Promise<JsonRpcClient> {
  const client = await JsonRpcClient.open(ws);
  const r = await client.request('connect', { uid, token, deviceFlag, deviceId, clientTimestamp: Date.now() });
  const result = r.result as { reasonCode?: number } | undefined;
  if (result?.reasonCode !== 1) throw new Error(`connect failed: ${JSON.stringify(r)}`);
  return client;
}

/** Extracts every exact `message_id` integer literal from a JSON text, in order. */
export function rawMessageIds(text: string): string[] {
  return [...text.matchAll(/"message_id":(\d+)/g)].map((m) => m[1]!);
}
