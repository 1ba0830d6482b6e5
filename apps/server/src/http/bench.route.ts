import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  BENCH_VERSION,
  BenchChannelsBody,
  BenchEvictBody,
  BenchProbeBody,
  BenchRuntimeQuery,
  BenchSubscribersBody,
  BenchUsersTokensBody,
} from '@parley/shared';
import { BEARER_REQUIRED, bearerAllows } from '../observe/bearer.ts';
import { BenchError, BenchService } from '../observe/bench.service.ts';
import type { Ops } from '../observe/ops.ts';
import { ApiError, errorBody } from './errors.ts';

async function run<T>(work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof BenchError) throw new ApiError(err.status, 'bench_error', err.message);
    throw err;
  }
}

/**
 * The 12 bench registrations (terminal-fence/prepare only with a fence
 * controller and a token; Parley has no controller, so it is not
 * registered). Registered only when `bench.api_enable`; restore
 * maintenance answers 503 first, then the Bearer check; errors are
 * `{status, msg}`.
 */
export const benchRoutes: FastifyPluginAsyncTypebox<{ ops: Ops }> = async (app, { ops }) => {
  const { config, inputs } = ops;
  const nodeId = config.node.id;
  const maxBytes = config.bench.apiMaxPayloadBytes;
  const tooLarge = `payload too large: max ${maxBytes} bytes`;
  const bench = new BenchService(inputs, config.bench.apiMaxBatchSize);
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

  app.get('/bench/v1/capabilities', route, async () => ({
    enabled: true,
    version: BENCH_VERSION,
    supports: {
      users_tokens_batch: true,
      channels_batch: true,
      channel_subscribers_batch: true,
      channel_subscriber_removals_batch: true,
      snapshot: true,
      presence_snapshot: true,
      channel_runtime_snapshot: true,
      channel_runtime_probe: true,
      channel_runtime_evict: true,
      channel_runtime_faults: false,
      channel_runtime_activate: false,
      terminal_fence_prepare: false,
      channel_types: ['person', 'group'],
    },
    limits: { max_batch_size: config.bench.apiMaxBatchSize, max_payload_bytes: maxBytes },
  }));

  app.get('/bench/v1/capacity-target', route, async (request) => ({
    version: BENCH_VERSION,
    gateway: inputs.routeAddresses(request.headers.host),
  }));
  app.get('/bench/v1/snapshot', route, async () => ({ version: BENCH_VERSION, counts: { ...bench.counts } }));
  app.get('/bench/v1/presence/snapshot', route, async () => ({
    version: BENCH_VERSION,
    node_id: nodeId,
    owner_routes_active: inputs.presence.connections,
    owner_routes_pending: 0,
    owner_touched_dirty: 0,
    authority_routes_active: inputs.presence.connections,
    touch_routes_total: 0,
    expired_routes_total: 0,
  }));

  app.get('/bench/v1/channel-runtime/snapshot', { ...route, schema: { querystring: BenchRuntimeQuery } }, async (request) => {
    const ids = await run(() => bench.runtimeQuery(request.query));
    const active = inputs.queue.activeChannels;
    return {
      version: BENCH_VERSION,
      node_id: nodeId,
      ...ids,
      active_total: active,
      active_leader: active,
      active_follower: 0,
      follower_parked: 0,
      activation_rejected_total: 0,
      worker_queues: [{ pool: 'append', depth: inputs.queue.depth }],
    };
  });
  app.post('/bench/v1/channel-runtime/probe', { ...route, schema: { body: BenchProbeBody } }, async (request) =>
    run(() => bench.probe(request.body, nodeId)),
  );
  app.post('/bench/v1/channel-runtime/evict', { ...route, schema: { body: BenchEvictBody } }, async (request) =>
    run(() => bench.evict(request.body, nodeId)),
  );

  app.post('/bench/v1/users/tokens', { ...route, schema: { body: BenchUsersTokensBody } }, async (request) =>
    run(() => bench.usersTokens(request.body)),
  );
  app.post('/bench/v1/channels', { ...route, schema: { body: BenchChannelsBody } }, async (request) =>
    run(() => bench.channels(request.body)),
  );
  app.post('/bench/v1/channels/subscribers', { ...route, schema: { body: BenchSubscribersBody } }, async (request) =>
    run(() => bench.subscribers(request.body, false)),
  );
  app.post('/bench/v1/channels/subscribers/remove', { ...route, schema: { body: BenchSubscribersBody } }, async (request) =>
    run(() => bench.subscribers(request.body, true)),
  );
};
