import type { FastifyInstance } from 'fastify';

const ALLOW_HEADERS = 'Origin, Content-Type, Content-Length, Accept, Authorization, Token, X-Requested-With';
const ALLOW_METHODS = 'GET, POST, PUT, PATCH, DELETE, OPTIONS';

/**
 * CORS as WuKongIM answers it: any origin may read responses. This grants no
 * authority: the API has none to grant and must sit behind a trusted backend.
 * Every OPTIONS request is answered 204 before routing.
 */
export function installCors(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    const origin = request.headers.origin;
    reply.header('Access-Control-Allow-Origin', origin ?? '*');
    if (origin) reply.header('Vary', 'Origin');
    reply.header('Access-Control-Allow-Headers', ALLOW_HEADERS);
    reply.header('Access-Control-Allow-Methods', ALLOW_METHODS);
    reply.header('Access-Control-Expose-Headers', 'Content-Length, Content-Type');
    reply.header('Access-Control-Max-Age', '86400');
    if (request.method === 'OPTIONS') return reply.status(204).send();
  });
}
