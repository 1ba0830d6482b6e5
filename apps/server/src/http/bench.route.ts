import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  BenchChannelsBody,
  BenchEvictBody,
  BenchProbeBody,
  BenchRuntimeQuery,
  BenchSubscribersBody,
  BenchUsersTokensBody,
} from '@parley/shared';
import { BEARER_REQUIRED, bearerAllows } from '../observe/bearer.ts';
import { BenchService } from '../observe/bench.service.ts';
import type { Ops } from '../observe/ops.ts';
import { errorBody } from './errors.ts';

/**
 * The 12 bench registrations (terminal-fence/prepare only with a fence
 * controller and a token; Parley has no controller, so it is not
 * registered). Registered only when `bench.api_enable`; restore
 * maintenance answers 503 first, then the Bearer check; errors are
 * `{status, msg}`.
 */
export const benchRoutes: FastifyPluginAsyncTypebox<{ ops: Ops }> = async (app, { ops }) => {
  const { config, inputs } = ops;
  const maxBytes = config.bench.apiMaxPayloadBytes;
  const tooLarge = `payload too large: max ${maxBytes} bytes`;
  const bench = new BenchService(inputs, { nodeId: config.node.id, maxBatch: config.bench.apiMaxBatchSize, maxPayloadBytes: maxBytes });
  app.addHook('onRequest', async (request, reply) => {
    if (ops.maintenance.active) return reply.status(503).send({ error: 'maintenance', message: 'restore maintenance is active' });
    if (!bearerAllows(config.bench.apiToken, request.headers.authorization)) {
      return reply.status(401).send(errorBody('error', 401, 'unauthorized', BEARER_REQUIRED));
    }
    if (Number(request.headers['content-length'] ?? 0) > maxBytes) {
      return reply.status(413).send(errorBody('legacy', 413, 'payload_too_large', tooLarge));
    }
  });
  // A chunked body has no Content-Length to check up front: the body limit stops it with the same answer.
  const route = {
    config: { errorShape: 'legacy' as const, bindMessage: 'invalid request', tooLargeMessage: tooLarge },
    bodyLimit: maxBytes,
  };

  app.get('/bench/v1/capabilities', route, async () => bench.capabilities());
  app.get('/bench/v1/capacity-target', route, async (request) => bench.capacityTarget(request.headers.host));
  app.get('/bench/v1/snapshot', route, async () => bench.snapshot());
  app.get('/bench/v1/presence/snapshot', route, async () => bench.presenceSnapshot());
  app.get('/bench/v1/channel-runtime/snapshot', { ...route, schema: { querystring: BenchRuntimeQuery } }, async (request) =>
    bench.runtimeSnapshot(request.query),
  );
  app.post('/bench/v1/channel-runtime/probe', { ...route, schema: { body: BenchProbeBody } }, (request) => bench.probe(request.body));
  app.post('/bench/v1/channel-runtime/evict', { ...route, schema: { body: BenchEvictBody } }, async (request) => bench.evict(request.body));
  app.post('/bench/v1/users/tokens', { ...route, schema: { body: BenchUsersTokensBody } }, (request) => bench.usersTokens(request.body));
  app.post('/bench/v1/channels', { ...route, schema: { body: BenchChannelsBody } }, (request) => bench.channels(request.body));
  app.post('/bench/v1/channels/subscribers', { ...route, schema: { body: BenchSubscribersBody } }, (request) =>
    bench.subscribers(request.body, false),
  );
  app.post('/bench/v1/channels/subscribers/remove', { ...route, schema: { body: BenchSubscribersBody } }, (request) =>
    bench.subscribers(request.body, true),
  );
};
