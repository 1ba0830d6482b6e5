import { rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JsonRpcClient } from '@parley/protocol/jsonrpc';
import { waitFor } from './ops-helpers.ts';
import { connectRpc, spawnServer, storeToken, tempDir, testEnv, type SpawnedServer } from './helpers.ts';

const CAP = 200;
let s: SpawnedServer;
let dir: string;
let tcpPort: number;
let wsPort: number;
const sockets: Socket[] = [];

beforeAll(async () => {
  dir = tempDir();
  s = await spawnServer(
    testEnv(dir, { PARLEY_GATEWAY_MAX_PENDING_CONNECTIONS: String(CAP), PARLEY_GATEWAY_AUTH_TIMEOUT: '60s', PARLEY_LOG_LEVEL: 'warn' }),
  );
  wsPort = Number(new URL(s.ws).port);
  tcpPort = Number(((await (await fetch(`${s.api}/route`)).json()) as { tcp_addr: string }).tcp_addr.split(':').pop());
});
afterAll(async () => {
  for (const so of sockets) so.destroy();
  s.proc.kill('SIGTERM');
  await s.exited;
  rmSync(dir, { recursive: true, force: true });
});

async function metricsText(): Promise<string> {
  return (await fetch(`${s.api}/metrics`)).text();
}

async function metric(name: string): Promise<number> {
  const m = new RegExp(`^${name}\\{[^}]*\\} (\\d+(?:\\.\\d+)?(?:e\\+\\d+)?)$`, 'm').exec(await metricsText());
  return m ? Number(m[1]) : NaN;
}

/** A TCP connection that sends the start of a CONNECT declaring `declared` body bytes. */
function halfTcpConnect(port: number, declared: number, send: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const so = connect(port, '127.0.0.1', () => {
      const varint: number[] = [];
      let n = declared;
      do {
        let b = n % 128;
        n = Math.floor(n / 128);
        if (n > 0) b |= 0x80;
        varint.push(b);
      } while (n > 0);
      so.write(Buffer.concat([Buffer.from([0x10, ...varint]), Buffer.alloc(send, 1)]));
      resolve(so);
    });
    so.on('error', () => undefined);
    so.once('error', reject);
    sockets.push(so);
  });
}

/** A WebSocket upgraded by hand that sends the start of one binary frame declaring `declared` bytes. */
function halfWsFrame(port: number, declared: number, send: number): Promise<{ socket: Socket; status: number }> {
  return new Promise((resolve, reject) => {
    const so = connect(port, '127.0.0.1', () => {
      so.write(
        'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
      );
    });
    sockets.push(so);
    so.on('error', () => undefined);
    let head = '';
    const onData = (d: Buffer) => {
      head += d.toString('latin1');
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      so.off('data', onData);
      const status = Number(head.split(' ')[1]);
      if (status === 101) {
        const len = Buffer.alloc(8);
        len.writeBigUInt64BE(BigInt(declared));
        so.write(Buffer.concat([Buffer.from([0x82, 0xff]), len, Buffer.from([1, 2, 3, 4]), Buffer.alloc(send, 7)]));
      }
      resolve({ socket: so, status });
    };
    so.on('data', onData);
    so.once('close', () => reject(new Error('closed during upgrade')));
  });
}

const closed = (so: Socket) => new Promise<void>((resolve) => (so.destroyed ? resolve() : so.once('close', () => resolve())));

describe('memory before login', { timeout: 30_000 }, () => {
  it('closes a connection that sends more than a CONNECT can be before CONNECT completes', async () => {
    // A CONNECT declaring 1 MiB is refused at its header: nothing is allocated for it.
    await closed(await halfTcpConnect(tcpPort, 1_048_576, 100));
    // A WebSocket frame may declare 1 MiB, but the connection is cut once 16 KiB have arrived.
    const ws = await halfWsFrame(wsPort, 1_048_576, 4096);
    expect(ws.status).toBe(101);
    ws.socket.write(Buffer.alloc(20_000, 7));
    await closed(ws.socket);
    await waitFor(async () => ((await metric('parley_gateway_prelogin_connections')) === 0 ? true : undefined));
  });

  it('holds 300 half-sent CONNECTs under the global cap: 200 wait, 100 are refused at once, and memory stays small', async () => {
    const rssBefore = await metric('parley_process_resident_memory_bytes');
    const tcp = Array.from({ length: 150 }, () => halfTcpConnect(tcpPort, 12_000, 6000));
    const ws = Array.from({ length: 150 }, () => halfWsFrame(wsPort, 1_048_576, 8000).catch(() => ({ socket: undefined, status: 0 })));
    const tcpSockets = await Promise.all(tcp);
    const wsResults = await Promise.all(ws);
    await waitFor(async () => ((await metric('parley_gateway_refused_connections_total')) === 100 ? true : undefined), 15_000);
    expect(await metric('parley_gateway_prelogin_connections')).toBe(CAP);
    const refusedWs = wsResults.filter((r) => r.status === 503).length;
    await waitFor(async () => (tcpSockets.filter((so) => so.destroyed).length === 100 - refusedWs ? true : undefined), 15_000);
    const rssAfter = await metric('parley_process_resident_memory_bytes');
    // 300 × 1 MiB would be 300 MiB; 200 × at most 16 KiB plus socket bookkeeping is a few MiB.
    expect(rssAfter - rssBefore).toBeLessThan(48 * 1024 * 1024);

    // At the cap a real client is refused too (503 at the upgrade) ...
    await expect(JsonRpcClient.open(s.ws)).rejects.toThrow(/503/);
    // ... and once the half-sent ones go, it connects.
    for (const so of sockets) so.destroy();
    await waitFor(async () => ((await metric('parley_gateway_prelogin_connections')) === 0 ? true : undefined), 15_000);
    await storeToken(s.api, 'after', 'tok');
    const c = await connectRpc(s.ws, 'after', 'tok');
    c.close();
  });
});
