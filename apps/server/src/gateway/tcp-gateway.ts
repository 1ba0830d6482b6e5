import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { Logger } from 'pino';
import type { ConnectionRegistry, LiveConnection } from './registry.ts';
import { SessionErrorClass } from './metrics.ts';
import type { GatewayServices } from './services.ts';
import { WkprotoSession } from './wkproto-session.ts';

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
  const metrics = services.metrics;
  const server: Server = createServer((socket) => {
    if (!registry.admits()) {
      socket.destroy();
      return;
    }
    sockets.add(socket);
    socket.setNoDelay(true);
    let closing = false;
    const session = new WkprotoSession(
      {
        send(packet) {
          if (closing || socket.destroyed) return;
          if (socket.writableLength > opts.maxOutboundBytes) {
            metrics.outbound.observe(socket.writableLength);
            metrics.sessionError('wkproto', 'outbound_overflow', SessionErrorClass.backpressure);
            log.info({ session: session.id }, 'closing a client that does not read');
            socket.destroy();
            return;
          }
          socket.write(packet);
          metrics.outbound.observe(socket.writableLength);
        },
        close() {
          if (closing) return;
          closing = true;
          socket.end();
          setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
        },
      },
      services,
      log,
      MAX_PACKET,
    );
    const entry: LiveConnection = {
      deadlines: session,
      protocol: 'wkproto',
      outboundBytes: () => socket.writableLength,
      pendingAcks: () => session.pendingAckCount,
      session: () => session,
      closeGracefully: () => {
        if (!socket.destroyed) socket.end();
      },
      terminate: () => socket.destroy(),
    };
    registry.add(entry);
    session.onAuthenticated = () => registry.loggedIn(entry);
    socket.on('data', (chunk) => session.onData(chunk));
    socket.on('error', (err) => log.debug({ err: err.message }, 'tcp socket error'));
    socket.on('close', () => {
      sockets.delete(socket);
      registry.delete(entry);
      services.metrics.closes++;
      session.onClose();
    });
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
