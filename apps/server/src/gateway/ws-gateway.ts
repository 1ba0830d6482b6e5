import { Buffer } from 'node:buffer';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from 'pino';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { CloseCode, WsConnection, type Deadlines, type OverflowListener } from './connection.ts';
import { JsonRpcSession } from './jsonrpc-session.ts';
import type { ConnectionRegistry, LiveConnection, RegisteredSession } from './registry.ts';
import { SessionErrorClass } from './metrics.ts';
import type { GatewayServices } from './services.ts';
import { MAX_CONNECT_BYTES } from './session-base.ts';
import { WkprotoSession, type PacketSink } from './wkproto-session.ts';
import { takeJsonRpcReadsBeforeWs } from './ws-reads.ts';
import { boundRequestTime } from '../http/request-timeout.ts';

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
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: opts.maxFrameBytes,
    perMessageDeflate: false,
    // The registry tracks every connection already; ws's own set would add an entry and a listener per socket.
    clientTracking: false,
  });

  const onRequest = (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(426, { 'content-type': 'text/plain' }).end('WebSocket upgrade required\n');
  };
  // A connection that never completes its upgrade request (or, with TLS, its handshake) is cut
  // like one that never sends CONNECT.
  const http: Server = opts.tls
    ? createHttpsServer({ cert: opts.tls.cert, key: opts.tls.key, handshakeTimeout: opts.authTimeoutMs }, onRequest)
    : createServer(onRequest);
  boundRequestTime(http, opts.authTimeoutMs);
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

  const gateway: WsGatewayContext = { services, registry, log, maxWkprotoPacket: Math.min(MAX_WKPROTO_PACKET, opts.maxFrameBytes) };
  function accept(ws: WebSocket, socket: Socket): void {
    const link = new WsLink(ws, socket, opts.maxOutboundBytes, gateway);
    registry.add(link);
    // Before CONNECT completes the connection may send at most one CONNECT's worth of bytes
    // (WebSocket framing included): counted on the raw socket, before ws buffers a frame.
    link.countPreLogin = (chunk: Buffer) => link.preLoginData(chunk);
    socket.on('data', link.countPreLogin);
    ws.on('message', (data: RawData, isBinary: boolean) => link.onMessage(data, isBinary));
    ws.on('close', () => link.onClose());
    // ws emits 'error' for frames that break RFC 6455 (socket failures just close).
    ws.on('error', (err: Error) => link.onError(err));
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

/** What every connection of one WebSocket listener shares. */
interface WsGatewayContext {
  services: GatewayServices;
  registry: ConnectionRegistry;
  log: Logger;
  /** Largest WKProto packet accepted over this listener, bytes. */
  maxWkprotoPacket: number;
}

/**
 * One WebSocket connection as the registry sees it, and its protocol session
 * once the first data picks one. A class, so the registry's view of a
 * connection costs one object and no closures of its own; before the protocol
 * is known it is its own deadlines.
 */
class WsLink implements LiveConnection, Deadlines, OverflowListener, PacketSink {
  deadlines: Deadlines = this;
  protocol: 'jsonrpc' | 'wkproto' | undefined = undefined;
  readonly openedAt = Date.now();
  inbound = 0;
  inboundSeen = 0;
  lastInboundAt = this.openedAt;
  authenticated = false;
  private readonly conn: WsConnection;
  private jsonrpc: JsonRpcSession | undefined;
  private wkproto: WkprotoSession | undefined;
  private preLoginBytes = 0;
  /** The raw socket's `data` listener until CONNECT completes. */
  countPreLogin: ((chunk: Buffer) => void) | undefined;

  constructor(
    private readonly ws: WebSocket,
    private readonly socket: Socket,
    maxOutboundBytes: number,
    private readonly gateway: WsGatewayContext,
  ) {
    this.conn = new WsConnection(ws, maxOutboundBytes, gateway.services.metrics.outbound, this, socket);
  }

  outboundBytes(): number {
    return this.conn.outboundBytes;
  }

  pendingAcks(): number {
    return (this.jsonrpc ?? this.wkproto)?.pendingAckCount ?? 0;
  }

  session(): RegisteredSession | undefined {
    return this.jsonrpc ?? this.wkproto;
  }

  closeGracefully(reason: string): void {
    this.conn.close(CloseCode.GoingAway, reason);
  }

  terminate(): void {
    this.ws.terminate();
  }

  expire(reason: 'auth timeout' | 'idle timeout'): void {
    this.conn.close(CloseCode.PolicyViolation, reason);
  }

  /** A WKProto session's packet, one binary message. */
  send(packet: Uint8Array): void {
    this.conn.send(packet);
  }

  /** A WKProto session closing. */
  close(reason: string): void {
    this.conn.close(CloseCode.PolicyViolation, reason.slice(0, 120));
  }

  overflowed(): void {
    const { log, services } = this.gateway;
    log.info({ protocol: this.protocol, session: (this.jsonrpc ?? this.wkproto)?.id }, 'closing a client that does not read');
    services.metrics.sessionError(this.protocol ?? 'unknown', 'outbound_overflow', SessionErrorClass.backpressure);
  }

  preLoginData(chunk: Buffer): void {
    this.preLoginBytes += chunk.length;
    if (this.preLoginBytes <= MAX_CONNECT_BYTES) return;
    this.stopCountingPreLogin();
    this.gateway.services.metrics.sessionError(this.protocol ?? 'unknown', 'connect_too_large', SessionErrorClass.protocol);
    this.socket.destroy();
  }

  private stopCountingPreLogin(): void {
    if (this.countPreLogin) this.socket.off('data', this.countPreLogin);
    this.countPreLogin = undefined;
  }

  /** CONNECT completed: the pre-login bounds no longer apply. */
  private loggedIn(): void {
    this.stopCountingPreLogin();
    this.gateway.registry.loggedIn(this);
  }

  onMessage(data: RawData, isBinary: boolean): void {
    const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
    if (this.jsonrpc) return this.jsonrpc.onMessage(buf.toString('utf8'));
    if (this.wkproto) return this.wkproto.onData(buf);
    const first = firstSignificantByte(buf);
    if (first === undefined && isBinary) return;
    const { services, log } = this.gateway;
    // WKProto clients send binary frames; any text frame is JSON-RPC (answered -32700 at once when it is not JSON).
    if (!isBinary || first === 0x7b || first === 0x5b) {
      this.protocol = 'jsonrpc';
      const session = new JsonRpcSession(this.conn, services, log);
      this.jsonrpc = session;
      session.onAuthenticated = () => {
        this.loggedIn();
        // A read of only compact recvacks, or of only ASCII text frames (a send, a few), is taken
        // before Node's stream and ws's parser (ws-reads.ts).
        takeJsonRpcReadsBeforeWs(
          this.ws,
          (slot) => session.onCompactRecvack(slot),
          (text) => session.onMessage(text),
        );
      };
      this.deadlines = session;
      session.onMessage(buf.toString('utf8'));
    } else {
      this.protocol = 'wkproto';
      const session = new WkprotoSession(this, services, log, this.gateway.maxWkprotoPacket);
      this.wkproto = session;
      session.onAuthenticated = () => this.loggedIn();
      this.deadlines = session;
      session.onData(buf);
    }
  }

  onClose(): void {
    const { registry, services } = this.gateway;
    registry.delete(this);
    services.metrics.closes++;
    this.jsonrpc?.onClose();
    this.wkproto?.onClose();
  }

  onError(err: Error): void {
    const { log, services } = this.gateway;
    log.debug({ err: err.message }, 'websocket error');
    const tooBig = (err as { code?: string }).code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH';
    services.metrics.sessionError(
      this.protocol ?? 'unknown',
      tooBig ? 'frame_too_large' : 'websocket_protocol_error',
      SessionErrorClass.protocol,
    );
    if (tooBig) return;
    this.ws.terminate();
  }
}
