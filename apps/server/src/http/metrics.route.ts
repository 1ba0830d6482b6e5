import type { FastifyPluginAsync } from 'fastify';
import type { Registry } from 'prom-client';

/** `/metrics` (any method): Prometheus text; registered only when `observability.metrics_enable`. */
export const metricsRoutes: FastifyPluginAsync<{ registry: Registry }> = async (app, { registry }) => {
  app.all('/metrics', async (_request, reply) => reply.type(registry.contentType).send(await registry.metrics()));
};
