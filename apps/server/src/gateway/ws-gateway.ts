import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from 'pino';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { CloseCode, WsConnection } from './connection.ts';
import { JsonRpcSession } from './jsonrpc-session.ts';
import type { ConnectionRegistry, LiveConnection } from './registry.ts';
import { SessionErrorClass } from './metrics.ts';
import type { GatewayServices } from './services.ts';
import { MAX_CONNECT_BYTES } from './session-base.ts';
import { WkprotoSession } from './wkproto-session.ts';
import { takeRecvacksBeforeWs } from './ws-recvack.ts';

export interface WsGatewayOptions {
  host: string;
  port: number;
  maxFrameBytes: number;
  maxOutboundBytes: number;
  /** `gateway.auth_timeout`, ms: also bounds how long the HTTP upgrade request may take. */
  authTimeoutMs: number;
  /** `gateway.tls_*`: accept `wss://` only. */
  tls?: { cert: Buffer; key: Buffer };
}

export interface WsGateway {
  address: AddressInfo;
  /** True while the listener accepts connections (readiness `routes`). */
  readonly listening: boolean;
  /** Live connections of every gateway listener, by protocol once known. */
  connections(): { total: number; jsonrpc: number; wkproto: number; pending: number };
  /** Stops taking new connections; the live ones stay open. */
  stopAccepting(): void;
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

  const onRequest = (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(426, { 'content-type': 'text/plain' }).end('WebSocket upgrade required\n');
  };
  const http: Server = opts.tls ? createHttpsServer({ cert: opts.tls.cert, key: opts.tls.key }, onRequest) : createServer(onRequest);
  // A connection that never completes its upgrade request is cut like one that never sends CONNECT.
  http.headersTimeout = opts.authTimeoutMs;
  http.requestTimeout = opts.authTimeoutMs;
  http.on('upgrade', (req, socket, head) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/') {
      socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    }
    if (!registry.admits()) {
      socket.end('HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => accept(ws, socket as Socket));
  });

  function accept(ws: WebSocket, socket: Socket): void {
    const metrics = services.metrics;
    const conn = new WsConnection(
      ws,
      opts.maxOutboundBytes,
      metrics.outbound,
      () => {
        log.info({ protocol: entry.protocol, session: (jsonrpc ?? wkproto)?.id }, 'closing a client that does not read');
        metrics.sessionError(entry.protocol ?? 'unknown', 'outbound_overflow', SessionErrorClass.backpressure);
      },
      socket,
    );
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
      session: () => jsonrpc ?? wkproto,
      closeGracefully: (reason) => conn.close(CloseCode.GoingAway, reason),
      terminate: () => ws.terminate(),
    };
    registry.add(entry);

    // Before CONNECT completes the connection may send at most one CONNECT's worth of bytes
    // (WebSocket framing included): counted on the raw socket, before ws buffers a frame.
    let preLoginBytes = 0;
    const countPreLogin = (chunk: Buffer) => {
      preLoginBytes += chunk.length;
      if (preLoginBytes <= MAX_CONNECT_BYTES) return;
      socket.off('data', countPreLogin);
      metrics.sessionError(entry.protocol ?? 'unknown', 'connect_too_large', SessionErrorClass.protocol);
      socket.destroy();
    };
    socket.on('data', countPreLogin);
    const loggedIn = () => {
      socket.off('data', countPreLogin);
      registry.loggedIn(entry);
    };

    ws.on('message', (data: RawData, isBinary: boolean) => {
      const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
      if (jsonrpc) return jsonrpc.onMessage(buf.toString('utf8'));
      if (wkproto) return wkproto.onData(buf);
      const first = firstSignificantByte(buf);
      if (first === undefined && isBinary) return;
      // WKProto clients send binary frames; any text frame is JSON-RPC (answered -32700 at once when it is not JSON).
      if (!isBinary || first === 0x7b || first === 0x5b) {
        entry.protocol = 'jsonrpc';
        const session = new JsonRpcSession(conn, services, log);
        jsonrpc = session;
        jsonrpc.onAuthenticated = () => {
          loggedIn();
          takeRecvacksBeforeWs(ws, (messageId) => session.onRecvack(messageId));
        };
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
        wkproto.onAuthenticated = loggedIn;
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
      metrics.sessionError(
        entry.protocol ?? 'unknown',
        tooBig ? 'frame_too_large' : 'websocket_protocol_error',
        SessionErrorClass.protocol,
      );
      if (tooBig) return;
      ws.terminate();
    });
  }

  let closed: Promise<void> | undefined;
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
    stopAccepting() {
      closed ??= new Promise<void>((resolve) => http.close(() => resolve()));
    },
    async close() {
      closed ??= new Promise<void>((resolve) => http.close(() => resolve()));
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      http.closeAllConnections();
      await closed;
    },
  };
}
