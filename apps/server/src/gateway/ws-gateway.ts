import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { CloseCode, WsConnection } from './connection.ts';
import { JsonRpcSession } from './jsonrpc-session.ts';
import type { ConnectionRegistry, LiveConnection } from './registry.ts';
import { SessionErrorClass } from './metrics.ts';
import type { GatewayServices } from './services.ts';
import { WkprotoSession } from './wkproto-session.ts';

export interface WsGatewayOptions {
  host: string;
  port: number;
  maxFrameBytes: number;
  maxOutboundBytes: number;
}

export interface WsGateway {
  address: AddressInfo;
  /** True while the listener accepts connections (readiness `routes`). */
  readonly listening: boolean;
  /** Live connections of every gateway listener, by protocol once known. */
  connections(): { total: number; jsonrpc: number; wkproto: number; pending: number };
  close(): Promise<void>;
}

/** WKProto packets are at most 1 MiB + header, whatever the WebSocket frame limit. */
const MAX_WKPROTO_PACKET = 1_048_576;

function firstSignificantByte(data: Buffer): number | undefined {
  for (const b of data) if (b !== 0x20 && b !== 0x09 && b !== 0x0d && b !== 0x0a) return b;
  return undefined;
}

/**
 * The WebSocket gateway on `gateway.ws_addr`, path `/`. The first data on a
 * connection picks its protocol for life: `{` or `[` means JSON-RPC (text
 * frames out), anything else binary WKProto (binary frames out, one packet
 * per message; inbound messages are a byte stream).
 */
export async function startWsGateway(
  opts: WsGatewayOptions,
  services: GatewayServices,
  registry: ConnectionRegistry,
  log: Logger,
): Promise<WsGateway> {
  const wss = new WebSocketServer({ noServer: true, maxPayload: opts.maxFrameBytes, perMessageDeflate: false });

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
    const metrics = services.metrics;
    const conn = new WsConnection(ws, opts.maxOutboundBytes, metrics.outbound, () => {
      log.info({ protocol: entry.protocol, session: (jsonrpc ?? wkproto)?.id }, 'closing a client that does not read');
      metrics.sessionError(entry.protocol ?? 'unknown', 'outbound_overflow', SessionErrorClass.backpressure);
    });
    const openedAt = Date.now();
    let jsonrpc: JsonRpcSession | undefined;
    let wkproto: WkprotoSession | undefined;
    const entry: LiveConnection = {
      deadlines: {
        openedAt,
        lastInboundAt: openedAt,
        authenticated: false,
        expire: (reason) => conn.close(CloseCode.PolicyViolation, reason),
      },
      protocol: undefined,
      outboundBytes: () => conn.outboundBytes,
      pendingAcks: () => (jsonrpc ?? wkproto)?.pendingAckCount ?? 0,
      terminate: () => ws.terminate(),
    };
    registry.add(entry);

    ws.on('message', (data: RawData) => {
      const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
      if (jsonrpc) return jsonrpc.onMessage(buf.toString('utf8'));
      if (wkproto) return wkproto.onData(buf);
      const first = firstSignificantByte(buf);
      if (first === undefined) return;
      if (first === 0x7b || first === 0x5b) {
        entry.protocol = 'jsonrpc';
        jsonrpc = new JsonRpcSession(conn, services, log);
        entry.deadlines = jsonrpc;
        jsonrpc.onMessage(buf.toString('utf8'));
      } else {
        entry.protocol = 'wkproto';
        wkproto = new WkprotoSession(
          { send: (packet) => conn.send(packet), close: (reason) => conn.close(CloseCode.PolicyViolation, reason.slice(0, 120)) },
          services,
          log,
          Math.min(MAX_WKPROTO_PACKET, opts.maxFrameBytes),
        );
        entry.deadlines = wkproto;
        wkproto.onData(buf);
      }
    });
    ws.on('close', () => {
      registry.delete(entry);
      services.metrics.closes++;
      jsonrpc?.onClose();
      wkproto?.onClose();
    });
    // ws emits 'error' for frames that break RFC 6455 (socket failures just close).
    ws.on('error', (err) => {
      log.debug({ err: err.message }, 'websocket error');
      const tooBig = (err as { code?: string }).code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH';
      metrics.sessionError(entry.protocol ?? 'unknown', tooBig ? 'frame_too_large' : 'websocket_protocol_error', SessionErrorClass.protocol);
      if (tooBig) return;
      ws.terminate();
    });
  }

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(opts.port, opts.host, () => resolve());
  });

  return {
    address: http.address() as AddressInfo,
    get listening() {
      return http.listening;
    },
    connections: () => registry.counts(),
    async close() {
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
