/**
 * The Parley server under test: `parley start` as a child pinned to the server
 * core, production defaults (durable: `store.sync=full`, log level info) on
 * loopback ephemeral ports with a fresh temp data dir, plus the HTTP calls the
 * scenarios need (tokens, groups, offline sync).
 */
import process from 'node:process';
import { Buffer } from 'node:buffer';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve as resolvePath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { signalChild, spawnTracked, stopChild } from '../children.ts';
import { pinned } from '../pinning.ts';
import { measuredPhases } from '../proc-stats.ts';
import { pool } from '../stats.ts';
import type { ChildProcess } from 'node:child_process';
import { listeningEventIn } from '@parley/shared';

/** `apps/server/bin/parley.js`, found relative to this workspace. */
export const PARLEY_BIN = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'server', 'bin', 'parley.js');

/**
 * `apps/server/bin/parley-node`, the production launcher (`npm start`, the image): it picks node's
 * garbage-collector flags for the CPUs the server may use (on the bench's one pinned core,
 * `--single-threaded-gc`) and execs bin/parley.js, so the pid is node's. `PARLEY_GC_THREADS`
 * (auto, single or parallel), `PARLEY_WKCRYPTO` (native or js), `PARLEY_READPUMP` (on or off) and
 * `PARLEY_STORE_SQLITE_WAL_BUFFER` (auto, on or off) in the bench's environment are passed on.
 */
export const PARLEY_LAUNCHER = join(dirname(PARLEY_BIN), 'parley-node');

/** The token every bench user authenticates with on Parley (and its MQTT password on mosquitto). */
export const tokenOf = (uid: string): string => `tok-${uid}`;

/** A started Parley process and its loopback addresses. */
export interface ParleyServer {
  proc: ChildProcess;
  pid: number;
  /** `http://127.0.0.1:P` */
  api: string;
  /** `ws://127.0.0.1:P` */
  ws: string;
  /** `tcp://127.0.0.1:P` */
  tcp: string;
  /** The last 16 KiB the server wrote to stderr (its log). */
  logTail(): string;
  stop(): Promise<void>;
}

/**
 * Starts Parley on core 0 (or, with `pin` false, wherever the scheduler puts
 * it: cluster nodes share the machine with PostgreSQL and NATS); `nodeArgs` go
 * to node (e.g. `--cpu-prof`), `env` adds `PARLEY_*` settings (a cluster
 * node's). Resolves on its `listening` line. With `perfFile`, `perf record`
 * samples the server (kernel and native frames too) from then until it stops.
 */
export function startParley(
  nodeArgs: readonly string[] = [],
  perfFile?: string,
  env: Record<string, string> = {},
  pin = true,
  perfHz = PERF_HZ,
): Promise<ParleyServer> {
  const spaced = nodeArgs.find((a) => /\s/.test(a));
  if (spaced !== undefined) throw new Error(`node argument "${spaced}" holds white space (the launcher splits PARLEY_NODE_FLAGS on it)`);
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-bench-'));
  // A measuring tool to run the server under (e.g. `valgrind --tool=callgrind …`, bench/callgrind-group-server.sh).
  const wrap = (process.env.PARLEY_BENCH_SERVER_WRAP ?? '').split(' ').filter((w) => w !== '');
  const launch = [...wrap, PARLEY_LAUNCHER];
  const [cmd, args] = pin ? pinned(0, launch[0]!, [...launch.slice(1), 'start']) : [launch[0]!, [...launch.slice(1), 'start']];
  const startLimitMs = wrap.length > 0 ? 600_000 : 30_000;
  // With perf, node writes its JIT dump (--perf-prof) into the server's working directory.
  const jitDir = perfFile ? perfJitDir(perfFile) : undefined;
  if (jitDir) mkdirSync(jitDir, { recursive: true });
  const proc = spawnTracked(cmd, args, {
    ...(jitDir ? { cwd: jitDir } : {}),
    // Under a wrapping tool the server may be the tool's child: stopped as a process group.
    detached: wrap.length > 0,
    env: {
      // The launcher runs the `node` it finds first: this one.
      PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
      HOME: process.env.HOME ?? '',
      // perf needs node's JIT dump to name JavaScript frames (the CLI puts the flag in nodeArgs, where the JSON records it).
      PARLEY_NODE_FLAGS: [...nodeArgs, ...(perfFile && !nodeArgs.includes('--perf-prof') ? ['--perf-prof'] : [])].join(' '),
      ...(process.env.PARLEY_GC_THREADS ? { PARLEY_GC_THREADS: process.env.PARLEY_GC_THREADS } : {}),
      // WKProto's crypto implementation (the JSON's machine.wkcrypto records the one in use).
      ...(process.env.PARLEY_WKCRYPTO ? { PARLEY_WKCRYPTO: process.env.PARLEY_WKCRYPTO } : {}),
      // Socket reads through the read pump or Node's per-read path (the JSON's machine.readPump records which).
      ...(process.env.PARLEY_READPUMP ? { PARLEY_READPUMP: process.env.PARLEY_READPUMP } : {}),
      // The SQLite WAL buffer (the JSON's machine.walBuffer records the setting and whether it is built).
      ...(process.env.PARLEY_STORE_SQLITE_WAL_BUFFER ? { PARLEY_STORE_SQLITE_WAL_BUFFER: process.env.PARLEY_STORE_SQLITE_WAL_BUFFER } : {}),
      PARLEY_NODE_DATA_DIR: dataDir,
      PARLEY_API_LISTEN_ADDR: '127.0.0.1:0',
      PARLEY_GATEWAY_WS_ADDR: '127.0.0.1:0',
      PARLEY_GATEWAY_TCP_ADDR: '127.0.0.1:0',
      // Provisioning stores every user's token at once: lift the credential rate limits (per minute).
      PARLEY_API_CREDENTIAL_RATE_PER_KEY: '10000000',
      PARLEY_API_CREDENTIAL_RATE_PER_UID: '1000000',
      // Thousands of clients connect at once; each may wait for its CONNECT.
      PARLEY_GATEWAY_MAX_PENDING_CONNECTIONS: '1000000',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  let out = '';
  proc.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-16_384)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signalChild(proc, 'SIGKILL');
      reject(new Error(`parley did not start within ${startLimitMs / 1000} s:\n${err}`));
    }, startLimitMs);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`parley exited (${code}) before listening:\n${err}`));
    });
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const ev = listeningEventIn(out);
      if (!ev) return;
      clearTimeout(timer);
      const perf = perfFile ? startPerfRecord(proc.pid!, perfRawFile(perfFile), perfHz) : undefined;
      resolve({
        proc,
        pid: proc.pid!,
        api: `http://${ev.api}`,
        ws: `ws://${ev.ws}`,
        tcp: `tcp://${ev.tcp}`,
        logTail: () => err,
        async stop() {
          if (perf) await stopChild(perf, 10_000, 'SIGINT');
          await stopChild(proc);
          rmSync(dataDir, { recursive: true, force: true });
          if (perf && perfFile) finishPerf(perfFile, proc.pid!);
        },
      });
    });
  });
}

/** `perf record`'s sampling rate unless `--perf-hz` says otherwise, samples a second. */
export const PERF_HZ = 499;

/**
 * `perf record` of `pid` (call graphs, `hz` samples a second) into `file`, itself on the generator's core 1. Its
 * clock is CLOCK_MONOTONIC (`-k mono`): the clock of node's JIT dump, which `perf inject --jit`
 * matches samples against, and of `process.hrtime`, which times the measured phases.
 */
function startPerfRecord(pid: number, file: string, hz: number): ChildProcess {
  const [cmd, args] = pinned(1, 'perf', ['record', '-k', 'mono', '-F', String(hz), '-g', '-p', String(pid), '-o', file, '--quiet']);
  return spawnTracked(cmd, args, { stdio: 'ignore' });
}

/** The folder beside `X.perf.data` where the server runs and its JIT code lands (`X.jit`). */
const perfJitDir = (perfFile: string): string => resolvePath(perfFile.replace(/\.perf\.data$/, '') + '.jit');
/** What `perf record` writes before the JIT code is injected. */
const perfRawFile = (perfFile: string): string => `${perfFile}.raw`;

/**
 * Makes the recording readable once server and perf have stopped: `perf inject --jit` turns node's
 * JIT dump (every code object with the time it was made, moved or replaced) into one small ELF
 * file per code object in the `.jit` folder and names each sample's JavaScript frame by the code
 * that was at that address at that moment. (`--perf-basic-prof`'s map file, used before, has no
 * times: an address V8 reused for new code kept the name of whatever was there first.) Then
 * writes `X.perf.data.phases`: each measured phase as `label<TAB>start,end`, in perf's seconds,
 * ready for `perf report --time`. If the injection fails, the raw recording is kept as the file
 * (JavaScript frames unnamed) and the reason goes to stderr.
 */
function finishPerf(perfFile: string, pid: number): void {
  const raw = perfRawFile(perfFile);
  const jitDir = perfJitDir(perfFile);
  try {
    // Without `--buildid-dir /dev/null` (perf's way of saying "keep no copies") perf would copy every
    // injected file, and node itself, into its build-id cache in ~/.debug: some 150 MB a server.
    execFileSync('perf', ['--buildid-dir', '/dev/null', 'inject', '--jit', '-i', raw, '-o', perfFile], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    rmSync(raw, { force: true });
    // The dump was only the injection's input; V8's isolate logs (--perf-prof writes them too) serve nothing here.
    for (const f of readdirSync(jitDir)) if (/^jit-\d+\.dump$|^isolate-.*\.log$/.test(f)) rmSync(join(jitDir, f), { force: true });
  } catch (e) {
    const why = (e as { stderr?: Buffer }).stderr?.toString().trim() || (e as Error).message;
    process.stderr.write(`perf inject --jit failed (JavaScript frames stay unnamed in ${perfFile}): ${why}\n`);
    if (existsSync(raw)) renameSync(raw, perfFile);
  }
  const seconds = (ns: bigint): string =>
    `${ns / 1_000_000_000n}.${String(ns % 1_000_000_000n)
      .padStart(9, '0')
      .slice(0, 6)}`;
  const lines = measuredPhases(pid).map((p) => `${p.label}\t${seconds(p.startNs)},${seconds(p.endNs)}\n`);
  writeFileSync(`${perfFile}.phases`, lines.join(''));
}

/** Kept-alive connections to the API: the generator pays for TCP set-up once, not per request. */
const agent = new Agent({ keepAlive: true, maxSockets: 64 });

/**
 * POSTs JSON to the Parley HTTP API; throws on a non-200 answer. Through
 * `node:http` rather than `fetch`, whose stream machinery cost the generator
 * most of its core in S3.
 */
export function postJson(api: string, path: string, body: unknown): Promise<unknown> {
  const data = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = request(
      api + path,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': data.length } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200) reject(new Error(`POST ${path}: ${res.statusCode} ${text.slice(0, 300)}`));
          else resolve(text === '' ? undefined : JSON.parse(text));
        });
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

/** GETs text from the Parley HTTP API (`/metrics`); throws on a non-200 answer. */
export function getText(api: string, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(api + path, { agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode !== 200) reject(new Error(`GET ${path}: ${res.statusCode} ${text.slice(0, 300)}`));
        else resolve(text);
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** GETs JSON from the Parley HTTP API; throws on a non-200 answer. */
export async function getJson(api: string, path: string): Promise<unknown> {
  return JSON.parse(await getText(api, path));
}

/** Stores every uid's token (`POST /user/token`, 32 requests in flight). */
export async function storeTokens(api: string, uids: readonly string[], deviceFlag: number): Promise<void> {
  await pool(uids, 32, async (uid) => {
    await postJson(api, '/user/token', { uid, token: tokenOf(uid), device_flag: deviceFlag, device_level: 0 });
  });
}

/** The generator's body inside a stored payload: JSON-RPC sends `{"b": body}`, WKProto the raw text. */
export function bodyOfPayload(payload: Buffer): string {
  const text = payload.toString('utf8');
  if (text.startsWith('{')) {
    try {
      const o = JSON.parse(text) as { b?: unknown };
      if (typeof o.b === 'string') return o.b;
    } catch {
      /* not a JSON payload: the text itself */
    }
  }
  return text;
}

/** Rows per `/channel/messagesync` page in S3. */
export const SYNC_PAGE = 100;

/** Pulls every message of the person channel uid↔fromUid (pull_mode 1, pages of {@link SYNC_PAGE}). */
export async function syncChannel(api: string, uid: string, fromUid: string, onBody: (body: string) => void): Promise<number> {
  let start = 0;
  let rows = 0;
  for (let page = 0; page < 10_000; page++) {
    const r = (await postJson(api, '/channel/messagesync', {
      login_uid: uid,
      channel_id: fromUid,
      channel_type: 1,
      start_message_seq: start,
      pull_mode: 1,
      limit: SYNC_PAGE,
    })) as { more: number; messages: Array<{ message_seq: number; payload: string }> };
    for (const m of r.messages) {
      onBody(bodyOfPayload(Buffer.from(m.payload, 'base64')));
      start = m.message_seq + 1;
    }
    rows += r.messages.length;
    if (r.more !== 1 || r.messages.length === 0) break;
  }
  return rows;
}
