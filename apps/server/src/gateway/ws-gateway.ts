import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { CloseCode, WsConnection, type Deadlines } from './connection.ts';
import { JsonRpcSession } from './jsonrpc-session.ts';
import type { GatewayServices } from './services.ts';

export interface WsGatewayOptions {
  host: string;
  port: number;
  maxFrameBytes: number;
  maxOutboundBytes: number;
  authTimeoutMs: number;
  idleTimeoutMs: number;
}

export interface WsGateway {
  address: AddressInfo;
  /** Live connections, by protocol once known. */
  connections(): { total: number; jsonrpc: number; wkproto: number; pending: number };
  close(): Promise<void>;
}

/** How often deadlines are checked, ms. */
const SWEEP_MS = 1000;

function firstSignificantByte(data: Buffer): number | undefined {
  for (const b of data) if (b !== 0x20 && b !== 0x09 && b !== 0x0d && b !== 0x0a) return b;
  return undefined;
}

/**
 * The WebSocket gateway on `gateway.ws_addr`, path `/`. The first data on a
 * connection picks its protocol for life: `{` or `[` means JSON-RPC (text
 * frames out), anything else binary WKProto.
 */
export async function startWsGateway(opts: WsGatewayOptions, services: GatewayServices, log: Logger): Promise<WsGateway> {
  const wss = new WebSocketServer({ noServer: true, maxPayload: opts.maxFrameBytes, perMessageDeflate: false });
  const live = new Set<{ deadlines: Deadlines | undefined; protocol: 'jsonrpc' | 'wkproto' | undefined; socket: WebSocket }>();

  const http: Server = createServer((_req, res) => {
    res.writeHead(426, { 'content-type': 'text/plain' }).end('WebSocket upgrade required\n');
  });
  http.on('upgrade', (req, socket, head) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/') {
      socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => accept(ws));
  });

  function accept(ws: WebSocket): void {
    const conn = new WsConnection(ws, opts.maxOutboundBytes);
    const openedAt = Date.now();
    const entry: { deadlines: Deadlines | undefined; protocol: 'jsonrpc' | 'wkproto' | undefined; socket: WebSocket } = {
      deadlines: {
        openedAt,
        lastInboundAt: openedAt,
        authenticated: false,
        expire: (reason) => conn.close(CloseCode.PolicyViolation, reason),
      },
      protocol: undefined,
      socket: ws,
    };
    live.add(entry);
    let session: JsonRpcSession | undefined;

    ws.on('message', (data: RawData, isBinary: boolean) => {
      const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
      if (entry.protocol === undefined) {
        const first = firstSignificantByte(buf);
        if (first === undefined) return;
        if (first === 0x7b || first === 0x5b) {
          entry.protocol = 'jsonrpc';
          session = new JsonRpcSession(conn, services, log);
          entry.deadlines = session;
        } else {
          entry.protocol = 'wkproto';
          conn.close(CloseCode.UnsupportedData, 'binary WKProto is not enabled on this listener');
          return;
        }
      }
      if (session) session.onMessage(isBinary ? buf.toString('utf8') : buf.toString('utf8'));
    });
    ws.on('close', () => {
      live.delete(entry);
      services.metrics.closes++;
      session?.onClose();
    });
    ws.on('error', (err) => {
      log.debug({ err: err.message }, 'websocket error');
      if ((err as { code?: string }).code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') return;
      ws.terminate();
    });
  }

  const sweep = setInterval(() => {
    const now = Date.now();
    for (const { deadlines } of live) {
      if (!deadlines) continue;
      if (!deadlines.authenticated && now - deadlines.openedAt > opts.authTimeoutMs) deadlines.expire('auth timeout');
      else if (now - deadlines.lastInboundAt > opts.idleTimeoutMs) deadlines.expire('idle timeout');
    }
  }, SWEEP_MS);
  sweep.unref();

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(opts.port, opts.host, () => resolve());
  });

  return {
    address: http.address() as AddressInfo,
    connections() {
      let jsonrpc = 0;
      let wkproto = 0;
      let pending = 0;
      for (const e of live) {
        if (e.protocol === 'jsonrpc') jsonrpc++;
        else if (e.protocol === 'wkproto') wkproto++;
        else pending++;
      }
      return { total: live.size, jsonrpc, wkproto, pending };
    },
    async close() {
      clearInterval(sweep);
      for (const e of live) e.socket.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
