import type { FastifyInstance } from 'fastify';
import { openMemoryStore, openPostgresStore, type Store } from '@parley/store';
import { storeEnv, type StoreDriver } from '../../../test-support/stores.ts';
import type { HttpRequest, HttpTarget } from '../../../test-support/http.ts';
import { testEnv } from '../../../test-support/parley.ts';
import { createApi } from '../src/api/index.ts';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config/config.ts';
import { createLogger } from '../src/log.ts';
import { checkReadiness } from '../src/observe/readiness.ts';
import { createServices, type Services } from '../src/services.ts';

/** The HTTP API in this process over an in-memory store, with no port: requests go through `app.inject`. */
export interface TestApp {
  app: FastifyInstance;
  /** Pass to `post`/`get` as the target. */
  api: HttpTarget;
  store: Store;
  services: Services;
  close(): Promise<void>;
}

/** An `HttpTarget` that sends each request through `app.inject`. */
export function injector(app: FastifyInstance): HttpTarget {
  return async (req: HttpRequest) => {
    const res = await app.inject({ method: req.method as 'GET', url: req.path, headers: req.headers, payload: req.body });
    const headers = new Headers();
    for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) headers.set(name, String(value));
    return { status: res.statusCode, text: res.payload, headers };
  };
}

/**
 * The business API wired as the server wires it (same services, same routes,
 * same error handler) over a store in memory (or, with `driver` postgres, in a
 * fresh PostgreSQL schema dropped on close), without gateways or listeners:
 * for route tests where a real socket is not the point.
 */
export async function startTestApp(extraEnv: Record<string, string> = {}, driver: StoreDriver = 'sqlite'): Promise<TestApp> {
  const config = loadConfig(undefined, testEnv('/nonexistent', extraEnv));
  const log = createLogger('silent');
  const pg = driver === 'postgres' ? storeEnv(driver, 'parley_app') : undefined;
  const store = pg ? await openPostgresStore({ url: pg.url, poolSize: 4 }) : await openMemoryStore();
  const services = await createServices(config, store, log);
  const routeAddresses = () => ({ tcp_addr: '127.0.0.1:5100', ws_addr: 'ws://127.0.0.1:5200', wss_addr: '' });
  const readiness = () =>
    checkReadiness({ gatewaysListening: () => true, storeReadable: () => store.ping(), storeWritable: () => store.probeWrite(50) });
  const app = await buildApp({
    deps: { api: createApi({ ...services, nodeId: config.node.id, routeAddresses }), readiness },
    logger: log,
    maxBodyBytes: config.api.maxBodyBytes,
    requestTimeoutMs: config.api.requestTimeoutMs,
  });
  return {
    app,
    api: injector(app),
    store,
    services,
    async close() {
      await app.close();
      await services.queue.drain();
      await store.close();
      await pg?.drop();
    },
  };
}
