import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Logger } from 'pino';
import { benchRoutes } from './http/bench.route.ts';
import { channelRoutes } from './http/channel.route.ts';
import { installApiAccess, type ApiAccessOptions } from './http/api-access.ts';
import { installCors } from './http/cors.ts';
import { docsRoutes, installOpenApi } from './http/docs.route.ts';
import type { HttpDeps } from './http/deps.ts';
import { installErrorHandler } from './http/errors.ts';
import { debugRoutes } from './http/debug.route.ts';
import { healthRoutes } from './http/health.route.ts';
import { metricsRoutes } from './http/metrics.route.ts';
import { cmdRoutes } from './http/cmd.route.ts';
import { conversationRoutes } from './http/conversation.route.ts';
import { eventRoutes } from './http/event.route.ts';
import { identityRoutes } from './http/identity.route.ts';
import { parseJsonBody } from './http/json-body.ts';
import { memberListRoutes } from './http/member-list.route.ts';
import { messageRoutes } from './http/message.route.ts';
import { syncRoutes } from './http/sync.route.ts';
import { topRoutes } from './http/top.route.ts';
import { userRoutes } from './http/user.route.ts';
import type { Ops } from './observe/ops.ts';
import { boundRequestTime } from './http/request-timeout.ts';

/** A registered route as tests and docs see it. */
export interface RouteEntry {
  method: string;
  url: string;
  /** The JSON schema of its body, when it has one. */
  body?: unknown;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route registered on this instance (HEAD twins excluded). */
    registeredRoutes: readonly RouteEntry[];
  }
}

export interface AppOptions {
  deps: HttpDeps;
  logger: Logger;
  /** Largest request body, bytes. */
  maxBodyBytes: number;
  /** `api.request_timeout`: longest one request may take to arrive (headers and body), ms. */
  requestTimeoutMs: number;
  /** The operations surface; its routes are registered when given. */
  ops?: Ops;
  /** API keys and credential rate limits; none = no authentication (tests, loopback). */
  access?: ApiAccessOptions;
  /** `api.cors_origins`; none = CORS off. */
  corsOrigins?: readonly string[];
  /** `api.tls_*`: serve HTTPS only. */
  https?: { cert: Buffer; key: Buffer };
}

/**
 * The HTTP API as a Fastify instance with every route registered and no port
 * opened: tests call `inject()`, `main` calls `listen()`.
 */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    ...(options.https ? { https: options.https } : {}),
    loggerInstance: options.logger as FastifyBaseLogger,
    bodyLimit: options.maxBodyBytes,
    logController: new LogController({ disableRequestLogging: true }),
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false } },
  }).withTypeProvider<TypeBoxTypeProvider>();
  // Fastify leaves the request time unbounded (a body trickling a byte at a time held its
  // connection for as long as it went on).
  boundRequestTime(app.server, options.requestTimeoutMs);

  // Only application/json bodies are parsed (64-bit ids stay exact, nesting is bounded); any other
  // Content-Type, or none, is 415: a browser form post or text/plain body can never reach a route.
  const parseJson = (_request: unknown, body: string | Buffer, done: (err: Error | null, value?: unknown) => void) => {
    try {
      done(null, parseJsonBody(body.toString()));
    } catch (err) {
      done(err as Error, undefined);
    }
  };
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, parseJson);

  const routes: RouteEntry[] = [];
  app.decorate('registeredRoutes', routes);
  app.addHook('onRoute', (r) => {
    for (const method of [r.method].flat()) {
      if (method !== 'HEAD') routes.push({ method, url: r.url, body: (r.schema as { body?: unknown } | undefined)?.body });
    }
  });

  installCors(app, options.corsOrigins ?? []);
  installApiAccess(app, options.access ?? { keys: [], credentialRatePerKey: 6000, credentialRatePerUid: 60 });
  installErrorHandler(app);
  // Before every route: the OpenAPI generator sees only routes added after it.
  await installOpenApi(app);
  await app.register(docsRoutes);
  const { deps } = options;
  await app.register(healthRoutes, { deps });
  await app.register(userRoutes, { deps });
  await app.register(channelRoutes, { deps });
  await app.register(messageRoutes, { deps });
  await app.register(identityRoutes, { deps });
  await app.register(memberListRoutes, { deps });
  await app.register(syncRoutes, { deps });
  await app.register(conversationRoutes, { deps });
  await app.register(cmdRoutes, { deps });
  await app.register(eventRoutes, { deps });
  const { ops } = options;
  if (ops) {
    await app.register(topRoutes, { ops });
    if (ops.config.observability.debugApiEnable) await app.register(debugRoutes, { ops });
    if (ops.config.bench.apiEnable) await app.register(benchRoutes, { ops });
    if (ops.metrics) await app.register(metricsRoutes, { registry: ops.metrics });
  }
  return app;
}
