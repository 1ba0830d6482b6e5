import type { Buffer } from 'node:buffer';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { Logger } from 'pino';
import type { ConnectionRegistry, LiveConnection, RegisteredSession } from './registry.ts';
import { DirectWriter, takeReads } from '@parley/protocol/net';
import { SessionErrorClass } from './metrics.ts';
import type { GatewayServices } from './services.ts';
import { WkprotoSession, type PacketSink } from './wkproto-session.ts';

export interface TcpGatewayOptions {
  host: string;
  port: number;
  maxOutboundBytes: number;
}

export interface TcpGateway {
  address: AddressInfo;
  /** True while the listener accepts connections (readiness `routes`). */
  readonly listening: boolean;
  /** Stops taking new connections; the live ones stay open. */
  stopAccepting(): void;
  close(): Promise<void>;
}

/** Largest WKProto packet body accepted, bytes (the protocol's own bound). */
const MAX_PACKET = 1_048_576;
/** Grace for a closing socket to flush before it is destroyed, ms. */
const CLOSE_GRACE_MS = 2000;

/** The binary WKProto gateway on `gateway.tcp_addr` (no JSON-RPC on TCP, as in v3). */
export async function startTcpGateway(
  opts: TcpGatewayOptions,
  services: GatewayServices,
  registry: ConnectionRegistry,
  log: Logger,
): Promise<TcpGateway> {
  const sockets = new Set<Socket>();
  const gateway: TcpGatewayContext = { services, registry, log, maxOutboundBytes: opts.maxOutboundBytes, sockets };
  // One listener for every socket's errors (a socket failure also closes it).
  const onSocketError = (err: Error) => log.debug({ err: err.message }, 'tcp socket error');
  const server: Server = createServer((socket) => {
    if (!registry.admits()) {
      socket.destroy();
      return;
    }
    sockets.add(socket);
    socket.setNoDelay(true);
    const link = new TcpLink(socket, gateway);
    registry.add(link);
    socket.on('data', (chunk: Buffer) => link.wk.onData(chunk));
    // Reads go straight from the handle to the session while nothing is buffered (see
    // @parley/protocol/net), decoded where they lie in the shared read buffer: nothing the session
    // keeps is a view of a read (the decoder copies a packet split across reads, a SEND's payload
    // is decrypted into a buffer of its own or copied when unencrypted).
    takeReads(socket, (buf, start, n) => {
      link.wk.onData(buf, n, start);
      return true;
    });
    socket.on('error', onSocketError);
    socket.on('close', () => link.onClose());
  });
  let closed: Promise<void> | undefined;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  return {
    address: server.address() as AddressInfo,
    get listening() {
      return server.listening;
    },
    stopAccepting() {
      closed ??= new Promise<void>((resolve) => server.close(() => resolve()));
    },
    async close() {
      closed ??= new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

/** What every connection of the TCP listener shares. */
interface TcpGatewayContext {
  services: GatewayServices;
  registry: ConnectionRegistry;
  log: Logger;
  /** `gateway.max_outbound_bytes`: past this the client is not reading and is closed. */
  maxOutboundBytes: number;
  sockets: Set<Socket>;
}

/**
 * One TCP connection: its WKProto session's packet sink and the registry's
 * view of it, as one object with no closures of its own.
 */
class TcpLink implements LiveConnection, PacketSink {
  readonly protocol = 'wkproto' as const;
  /** The connection's WKProto session. */
  readonly wk: WkprotoSession;
  readonly deadlines: WkprotoSession;
  private closing = false;
  /** Every packet's write to the socket. */
  private readonly direct: DirectWriter;

  constructor(
    private readonly socket: Socket,
    private readonly gateway: TcpGatewayContext,
  ) {
    this.direct = new DirectWriter(socket);
    this.wk = new WkprotoSession(this, gateway.services, gateway.log, MAX_PACKET);
    this.deadlines = this.wk;
    this.wk.onAuthenticated = () => gateway.registry.loggedIn(this);
  }

  send(packet: Uint8Array): void {
    const socket = this.socket;
    if (this.closing || socket.destroyed) return;
    const { metrics } = this.gateway.services;
    const queued = this.direct.queuedBytes();
    if (queued > this.gateway.maxOutboundBytes) {
      metrics.outbound.observe(queued);
      metrics.sessionError('wkproto', 'outbound_overflow', SessionErrorClass.backpressure);
      this.gateway.log.info({ session: this.wk.id }, 'closing a client that does not read');
      socket.destroy();
      return;
    }
    // True only for a packet the kernel took whole through an empty queue: nothing queued to observe.
    if (!this.direct.write(packet)) metrics.outbound.observe(this.direct.queuedBytes());
  }

  close(): void {
    if (this.closing) return;
    this.closing = true;
    const socket = this.socket;
    socket.end();
    setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
  }

  outboundBytes(): number {
    return this.direct.queuedBytes();
  }

  pendingAcks(): number {
    return this.wk.pendingAckCount;
  }

  session(): RegisteredSession {
    return this.wk;
  }

  closeGracefully(): void {
    if (!this.socket.destroyed) this.socket.end();
  }

  terminate(): void {
    this.socket.destroy();
  }

  onClose(): void {
    const { sockets, registry, services } = this.gateway;
    sockets.delete(this.socket);
    registry.delete(this);
    services.metrics.closes++;
    this.wk.onClose();
  }
}
