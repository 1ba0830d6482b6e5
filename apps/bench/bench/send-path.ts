/**
 * A fixed amount of 1:1 send work for measuring the SERVER's instructions per
 * message under callgrind (not part of the bench run). Starts Parley itself
 * under `valgrind --tool=callgrind --separate-threads=yes` (bin/parley.js with
 * the launcher's flags for one core, plus `--perf-basic-prof` so the JIT code
 * addresses in the profile can be named from /tmp/perf-PID.map), connects
 * `pairs` sender/receiver pairs through the bench's own client (`jsonrpc` or
 * `wkproto`), and sends in windows of one message per pair (each window waits
 * for every sendack and delivery, and every delivery is checked by the
 * ledger): S1's shape, every send with a client_msg_no, every delivery
 * acknowledged. After a warm-up of `warmup` windows it asks callgrind to dump
 * (`callgrind_control -d`), runs `windows` measured windows and dumps again,
 * so the second dump of each thread holds the measured phase alone.
 *
 *   node --conditions=@parley/source --import tsx bench/send-path.ts jsonrpc OUTDIR [pairs] [windows] [warmup]
 *
 * Prints the dump files' prefix; `bench/callgrind-send.sh` runs it and sums the threads.
 */
import process from 'node:process';
import { performance } from 'node:perf_hooks';
import { execFile, spawn } from 'node:child_process';
import { appendFileSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { listeningEventIn } from '@parley/shared';
import { connectJsonRpc } from '../src/drivers/jsonrpc-conn.ts';
import { PARLEY_BIN, storeTokens, tokenOf } from '../src/drivers/parley-server.ts';
import { connectWkproto } from '../src/drivers/wkproto-conn.ts';
import { encodeBody, PhaseLedgers } from '../src/ledger.ts';
import type { Connection, Deliveries } from '../src/drivers/types.ts';

const [protocol = 'jsonrpc', out = '/tmp/callgrind-send', pairsArg = '20', windowsArg = '50', warmArg = '100'] = process.argv.slice(2);
if (protocol !== 'jsonrpc' && protocol !== 'wkproto') throw new Error(`protocol jsonrpc or wkproto, not ${protocol}`);
const pairs = Number(pairsArg);
const windows = Number(windowsArg);
const warmup = Number(warmArg);

mkdirSync(out, { recursive: true });
const dataDir = mkdtempSync(join(tmpdir(), 'parley-send-path-'));
const file = join(out, `${protocol}.out`);
/** `SEND_PATH_VALGRIND=0`: the server without valgrind (to check tiering with NODE_EXTRA=--trace-opt…). */
const traced = process.env.SEND_PATH_VALGRIND !== '0';
const proc = spawn(
  traced ? 'valgrind' : 'node',
  [
    ...(traced ? ['--tool=callgrind', '--separate-threads=yes', `--callgrind-out-file=${file}`, 'node'] : []),
    '--single-threaded-gc',
    '--no-allocation-site-pretenuring',
    '--perf-basic-prof',
    ...(process.env.NODE_EXTRA ? process.env.NODE_EXTRA.split(' ') : []),
    // SEND_PATH_BIN: another build of the server (an older commit's, for a before/after pair).
    process.env.SEND_PATH_BIN ?? PARLEY_BIN,
    'start',
  ],
  {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      PARLEY_NODE_DATA_DIR: dataDir,
      PARLEY_API_LISTEN_ADDR: '127.0.0.1:0',
      PARLEY_GATEWAY_WS_ADDR: '127.0.0.1:0',
      PARLEY_GATEWAY_TCP_ADDR: '127.0.0.1:0',
      PARLEY_API_CREDENTIAL_RATE_PER_KEY: '10000000',
      PARLEY_API_CREDENTIAL_RATE_PER_UID: '1000000',
    },
    // node's --perf-basic-prof also writes isolate-*-v8.log files into its working directory.
    cwd: out,
    stdio: ['ignore', 'pipe', process.env.SEND_PATH_SERVER_LOG ? 'inherit' : 'pipe'],
  },
);
let err = '';
proc.stderr?.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-16_384)));
const ev = await new Promise<{ api: string; ws: string; tcp: string }>((resolve, reject) => {
  let text = '';
  const timer = setTimeout(() => reject(new Error(`no listening line in 600 s:\n${err}`)), 600_000);
  proc.once('exit', (code) => reject(new Error(`server exited ${code}:\n${err}`)));
  proc.stdout!.on('data', (d: Buffer) => {
    if (process.env.SEND_PATH_STDOUT) appendFileSync(process.env.SEND_PATH_STDOUT, d);
    text += d.toString();
    const e = listeningEventIn(text);
    if (e) {
      clearTimeout(timer);
      resolve(e);
    }
  });
});
const api = `http://${ev.api}`;

try {
  const senders = Array.from({ length: pairs }, (_, i) => `sp-a${i}`);
  const receivers = Array.from({ length: pairs }, (_, i) => `sp-b${i}`);
  await storeTokens(api, [...senders, ...receivers], 1);
  const phases = new PhaseLedgers();
  let delivered = 0;
  let target = Infinity;
  let reached: (() => void) | undefined;
  const counted = (uid: string): Deliveries => {
    const r = phases.recipient(uid);
    const tick = (): void => {
      if (++delivered >= target) reached?.();
    };
    return {
      text: (body) => (r.text(body), tick()),
      bytes: (buf, start, end) => (r.bytes(buf, start, end), tick()),
    };
  };
  const connect = (uid: string, d: Deliveries): Promise<Connection> =>
    protocol === 'jsonrpc'
      ? connectJsonRpc(`ws://${ev.ws}`, uid, tokenOf(uid), d, 120_000)
      : connectWkproto(`tcp://${ev.tcp}`, uid, tokenOf(uid), d, 120_000);
  const rx: Connection[] = [];
  for (const uid of receivers) rx.push(await connect(uid, counted(uid)));
  const tx: Connection[] = [];
  for (const uid of senders) tx.push(await connect(uid, phases.recipient(uid)));

  const run = async (phase: string, count: number): Promise<void> => {
    const ledger = phases.open(phase);
    const streams = receivers.map((b, i) => {
      const id = `sp:${phase}:${i}`;
      ledger.expect(id, [b]);
      return id;
    });
    const base = delivered;
    for (let w = 0; w < count; w++) {
      const acks = tx.map((c, i) =>
        c.send({ kind: 'user', id: receivers[i]! }, encodeBody(streams[i]!, ledger.next(streams[i]!), performance.now(), 64)),
      );
      await Promise.all(acks);
      const want = base + (w + 1) * pairs;
      if (delivered < want) {
        const done = new Promise<void>((resolve) => (reached = resolve));
        target = want;
        const timer = setTimeout(() => reached?.(), 120_000);
        await done;
        clearTimeout(timer);
        target = Infinity;
        if (delivered < want) throw new Error(`${phase}: ${delivered - base} of ${want - base} deliveries`);
      }
    }
    const v = ledger.verdict();
    if (v.lost !== 0 || v.duplicates !== 0 || v.outOfOrder !== 0 || v.foreign !== 0) throw new Error(`${phase}: ${JSON.stringify(v)}`);
    process.stderr.write(`${phase}: ${count * pairs} messages ${JSON.stringify(v)}\n`);
  };
  const dump = async (): Promise<void> => {
    if (traced) await promisify(execFile)('callgrind_control', ['-d', String(proc.pid)]);
  };
  await run('warm', warmup);
  await new Promise((r) => setTimeout(r, 500));
  await dump();
  await run('measured', windows);
  await dump();
  // Kept beside the dumps (other /tmp cleaners may remove it once the server is gone).
  const perfMap = `/tmp/perf-${proc.pid}.map`;
  if (existsSync(perfMap)) copyFileSync(perfMap, `${file}.perf.map`);
  else process.stderr.write(`no ${perfMap}\n`);
  for (const c of [...tx, ...rx]) c.close();
  console.log(JSON.stringify({ file, pid: proc.pid, messages: windows * pairs }));
} finally {
  proc.kill('SIGTERM');
  await new Promise((r) => proc.once('exit', r));
  rmSync(dataDir, { recursive: true, force: true });
}
