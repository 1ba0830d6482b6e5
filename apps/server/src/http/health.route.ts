import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Healthz, Readyz } from '@parley/shared';
import type { HttpDeps } from './deps.ts';

/** `/healthz` (the process answers) and `/readyz` (the node can take traffic). */
export const healthRoutes: FastifyPluginAsyncTypebox<{ deps: HttpDeps }> = async (app, { deps }) => {
  app.get('/healthz', { schema: { response: { 200: Healthz } } }, async () => ({ status: 'ok' as const }));

  app.get('/readyz', { schema: { response: { 200: Readyz, 503: Readyz } } }, async (_request, reply) => {
    const r = await deps.readiness();
    return reply.status(r.ready ? 200 : 503).send(r.ready ? { ready: true, parts: r.parts } : r);
  });
};
