import type { FastifyInstance, FastifyRequest } from 'fastify';
import { errorBody } from './errors.ts';
import { ruleFor } from './route-scopes.ts';

const ALLOW_HEADERS = 'Origin, Content-Type, Content-Length, Accept, Authorization, Token, X-Requested-With';
const ALLOW_METHODS = 'GET, POST, PUT, PATCH, DELETE, OPTIONS';

/**
 * CORS only for the origins in `api.cors_origins` (`*` = any). With none, no
 * Access-Control header is ever sent, so a browser page on another origin
 * cannot read any answer. A request that carries an `Origin` not listed is
 * refused (403) before routing, except reads of the public health, readiness
 * and top routes: a web page can then neither read nor change anything, even
 * with a request that needs no preflight (form posts). An allowed origin's
 * preflight (`OPTIONS`) is answered 204 before routing.
 */
export function installCors(app: FastifyInstance, origins: readonly string[]): void {
  const any = origins.includes('*');
  const allowed = new Set(origins);
  const isAllowed = (origin: string) => any || allowed.has(origin);
  const publicRead = (request: FastifyRequest) =>
    request.method === 'GET' && ruleFor('GET', request.routeOptions.url ?? '').access === 'public';

  app.addHook('onRequest', async (request, reply) => {
    const origin = request.headers.origin;
    if (origin === undefined) {
      if (request.method === 'OPTIONS') return reply.status(204).send();
      return;
    }
    if (!isAllowed(origin)) {
      if (publicRead(request)) return;
      return reply
        .status(403)
        .send(errorBody('error', 403, 'origin_not_allowed', 'cross-origin requests from this origin are not allowed (api.cors_origins)'));
    }
    reply.header('Access-Control-Allow-Origin', any ? '*' : origin);
    if (!any) reply.header('Vary', 'Origin');
    reply.header('Access-Control-Allow-Headers', ALLOW_HEADERS);
    reply.header('Access-Control-Allow-Methods', ALLOW_METHODS);
    reply.header('Access-Control-Expose-Headers', 'Content-Length, Content-Type');
    reply.header('Access-Control-Max-Age', '86400');
    if (request.method === 'OPTIONS') return reply.status(204).send();
  });
}
