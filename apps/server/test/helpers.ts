import { rmSync } from 'node:fs';
import { tempDir, testEnv } from '../../../test-support/parley.ts';
import { loadConfig } from '../src/config/config.ts';
import { createLogger } from '../src/log.ts';
import { startServer, type RunningServer } from '../src/server.ts';

export { get, post, rawMessageIds, storeToken, type HttpResult } from '../../../test-support/http.ts';
export { PARLEY_BIN, spawnServer, tempDir, testEnv, type SpawnedServer } from '../../../test-support/parley.ts';
export { connectRpc } from '../../../test-support/realtime.ts';

export interface TestServer {
  server: RunningServer;
  api: string;
  ws: string;
  /** `tcp://127.0.0.1:port` of the WKProto TCP listener. */
  tcp: string;
  dataDir: string;
  close(): Promise<void>;
}

/**
 * The real server in this process, on port 0, with a fresh temp data dir.
 * With `onLog`, every log line (at `PARLEY_LOG_LEVEL`) is handed to it.
 */
export async function startTestServer(extraEnv: Record<string, string> = {}, onLog?: (line: string) => void): Promise<TestServer> {
  const dataDir = tempDir();
  const config = loadConfig(undefined, testEnv(dataDir, extraEnv));
  const log = onLog ? createLogger(config.log.level, { write: (line: string) => onLog(line) }) : createLogger('silent');
  const server = await startServer(config, log);
  return {
    server,
    dataDir,
    api: `http://127.0.0.1:${server.addresses.api.port}`,
    ws: `ws://127.0.0.1:${server.addresses.ws.port}`,
    tcp: `tcp://127.0.0.1:${server.addresses.tcp.port}`,
    async close() {
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
