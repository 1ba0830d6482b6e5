import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, loadConfig, startServer, type RunningServer } from '@parley/server';

/** A real Parley node in this process, on ephemeral loopback ports, with a temp data dir. */
export interface RealNode {
  api: string;
  server: RunningServer;
  close(): Promise<void>;
}

export async function startRealNode(env: Record<string, string> = {}): Promise<RealNode> {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-console-test-'));
  const config = loadConfig(undefined, {
    PARLEY_NODE_DATA_DIR: dataDir,
    PARLEY_API_LISTEN_ADDR: '127.0.0.1:0',
    PARLEY_GATEWAY_WS_ADDR: '127.0.0.1:0',
    PARLEY_GATEWAY_TCP_ADDR: '127.0.0.1:0',
    PARLEY_LOG_LEVEL: 'silent',
    PARLEY_TOP_COLLECT_INTERVAL: '100ms',
    ...env,
  });
  const server = await startServer(config, createLogger('silent'));
  return {
    api: `http://127.0.0.1:${server.addresses.api.port}`,
    server,
    async close() {
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A loopback HTTP server with a fixed behaviour, for the cases a Parley node never shows (redirects, huge bodies). */
export async function startHttp(handler: Parameters<typeof createServer>[1]): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** A loopback TCP server that accepts and never answers: a hung node. */
export async function startSilent(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<import('node:net').Socket>();
  const server: TcpServer = createTcpServer((s) => sockets.add(s));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/** A loopback port nothing listens on (bound, then released). */
export async function closedPort(): Promise<string> {
  const s = await startSilent();
  await s.close();
  return s.url;
}
