/**
 * The calibration loop as a target: the plainest durable IM loop Node can run
 * (JSON-RPC over WebSocket, one fsynced SQLite WAL transaction per event-loop turn,
 * no permissions, conversations or idempotency), kept outside this repository
 * (`--ref-im DIR`, by default `tools/ref-im` of the shared folder beside it).
 * It runs S1 only, pinned like the other servers, so Parley's CPU per message
 * can be read against what Node itself costs in the same run.
 */
import process from 'node:process';
import { copyFileSync, existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pinned } from '../pinning.ts';
import { spawnTracked, stopChild } from '../children.ts';
import { connectLimit, JsonSends } from './json-sends.ts';
import { WsClient } from './ws-client.ts';
import type { Connection, Deliveries, Destination, Driver } from './types.ts';

/** Where the calibration loop lives unless `--ref-im` says otherwise: `<repo>/../shared/tools/ref-im`. */
export const DEFAULT_REF_IM_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../../../../../shared/tools/ref-im');

/** Starts a fresh calibration loop (synchronous=FULL) on core 0 and returns its driver. */
export async function startRefImDriver(dir: string): Promise<Driver> {
  const script = join(dir, 'ref-im-server.mjs');
  if (!existsSync(script)) throw new Error(`the calibration loop is not at ${dir} (ref-im-server.mjs missing); pass --ref-im DIR`);
  // The loop imports `ws` and `better-sqlite3`: it runs from a temp folder whose node_modules is this
  // repository's (the same packages, already built), so its own folder needs no install and stays untouched.
  const work = mkdtempSync(join(tmpdir(), 'ref-im-bench-'));
  copyFileSync(script, join(work, 'ref-im-server.mjs'));
  symlinkSync(resolve(dirname(fileURLToPath(import.meta.url)), '../../../../node_modules'), join(work, 'node_modules'), 'dir');
  const [cmd, args] = pinned(0, process.execPath, [join(work, 'ref-im-server.mjs')]);
  const proc = spawnTracked(cmd, args, {
    cwd: work,
    env: { PATH: process.env.PATH ?? '', SYNC: 'FULL' },
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4096)));
  const port = await new Promise<number>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`ref-im did not listen within 10 s: ${err}`)), 10_000);
    proc.on('message', (m: { type?: string; port?: number }) => {
      if (m.type === 'listening' && typeof m.port === 'number') {
        clearTimeout(timer);
        res(m.port);
      }
    });
    proc.on('exit', (code) => rej(new Error(`ref-im exited (${code}): ${err}`)));
  });
  const stop = async () => {
    if (proc.connected) proc.send({ type: 'exit' });
    await stopChild(proc);
    rmSync(work, { recursive: true, force: true });
  };
  return {
    name: 'ref-im',
    pid: proc.pid!,
    durability: 'result after its WAL transaction is fsynced (synchronous=FULL)',
    provisionUsers: async () => undefined,
    createGroup: () => Promise.reject(new Error('ref-im runs S1 only')),
    connect: (uid, deliveries) => connectRefIm(`ws://127.0.0.1:${port}/?uid=${encodeURIComponent(uid)}&token=t`, uid, deliveries),
    prepareOffline: () => Promise.reject(new Error('ref-im runs S1 only')),
    catchUp: () => Promise.reject(new Error('ref-im runs S1 only')),
    stop,
  };
}

/**
 * One user's connection to the loop: the uid rides in the URL; results carry reasonCode 0. It runs on
 * the generator's own WebSocket client (`ws-client.ts`), as Parley's JSON-RPC connections do, so that
 * the loop's figures are not limited by a costlier client: on the `ws` package's client the loop's
 * generator failed `generator-cpu` at S1 @5k/s in a default run and at the staircase's 6k.
 */
function connectRefIm(url: string, uid: string, deliveries: Deliveries, timeoutMs = 10_000): Promise<Connection> {
  return new Promise((resolveConn, reject) => {
    let open = false;
    const limit = connectLimit(
      timeoutMs,
      () => new Error(`ref-im connect of ${uid} timed out`),
      () => socket,
      reject,
    );
    const onText = (text: string): void => {
      const frame = JSON.parse(text) as {
        id?: number;
        method?: string;
        result?: { reasonCode?: number };
        params?: { messageId: string; messageSeq: number; payload: { b?: string } };
      };
      if (frame.method === 'recv' && frame.params) {
        const p = frame.params;
        socket.sendText(`{"method":"recvack","params":{"messageId":"${p.messageId}","messageSeq":${p.messageSeq}}}`);
        deliveries.text(typeof p.payload?.b === 'string' ? p.payload.b : JSON.stringify(p.payload));
        return;
      }
      if (typeof frame.id === 'number') sends.settle(frame.id, frame.result?.reasonCode === 0, text);
    };
    const socket = new WsClient(url, {
      open() {
        open = true;
        limit.opened();
        resolveConn(conn);
      },
      text: (buf, start, end) => onText(buf.toString('utf8', start, end)),
      closed(err) {
        sends.closed();
        if (!open) limit.fail(err ?? new Error(`ref-im connection of ${uid} closed before it opened`));
      },
    });
    const sends = new JsonSends(socket, uid, false);
    const conn: Connection = {
      send: (to: Destination, body: string) => sends.send(to, body),
      close: () => socket.close(),
    };
  });
}
