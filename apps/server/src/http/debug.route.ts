import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { DebugCluster, DebugConfig, DiagnosticsQuery, DiagnosticsResult, ErrorBody, GoroutineSummary } from '@parley/shared';
import { redactedValues } from '../config/config.ts';
import { BEARER_REQUIRED, bearerAllows } from '../observe/bearer.ts';
import { DiagnosticsQueryError, type DiagnosticsStore } from '../observe/diagnostics.ts';
import type { Ops } from '../observe/ops.ts';
import {
  activeResourcesSummary,
  activeResourcesText,
  cpuProfile,
  DEFAULT_PROFILE_SECONDS,
  heapSnapshot,
  MAX_PROFILE_SECONDS,
  PPROF_PROFILES,
  PPROF_UNSUPPORTED,
  ProfilerBusyError,
} from '../observe/profiler.ts';
import { ApiError, errorBody } from './errors.ts';

const errors = { 400: ErrorBody, 401: ErrorBody, 404: ErrorBody };

function diagnose(run: () => unknown) {
  try {
    return run();
  } catch (err) {
    if (err instanceof DiagnosticsQueryError) throw new ApiError(400, 'invalid_query', err.message);
    throw err;
  }
}

function pprofIndex(): string {
  const lines = ['/debug/pprof/ (Node.js)', ''];
  for (const [name, doc] of Object.entries(PPROF_PROFILES)) lines.push(`${name}: ${doc}`);
  lines.push('', `not available on Node.js: ${PPROF_UNSUPPORTED.join(', ')}`);
  return `${lines.join('\n')}\n`;
}

/**
 * The debug group, registered only when `observability.debug_api_enable`.
 * With a non-empty `bench.api_token` every request needs that Bearer
 * credential. Node's equivalents stand in for Go's runtime profiles.
 */
export const debugRoutes: FastifyPluginAsyncTypebox<{ ops: Ops }> = async (app, { ops }) => {
  const { config } = ops;
  const token = config.bench.apiToken;
  const diagnostics = ops.diagnostics as DiagnosticsStore;
  app.addHook('onRequest', async (request, reply) => {
    if (!bearerAllows(token, request.headers.authorization)) {
      return reply.status(401).send(errorBody('error', 401, 'unauthorized', BEARER_REQUIRED));
    }
  });
  const route = { config: { errorShape: 'error' as const, bindMessage: 'invalid query' } };

  app.get('/debug/config', { ...route, schema: { response: { 200: DebugConfig, ...errors } } }, async () => ({
    node_id: config.node.id,
    node_name: config.node.name,
    node_data_dir: config.node.dataDir,
    cluster_listen: '',
    api_listen: config.values['api.listen_addr'] as string,
    gateway_listeners: 2,
    metrics_enable: config.observability.metricsEnable,
    debug_api_enable: config.observability.debugApiEnable,
    diagnostics_enable: true,
    initial_slot_count: config.cluster.initialSlotCount,
    hash_slot_count: config.cluster.hashSlotCount,
    slot_replica_count: config.cluster.slotReplicaN,
    channel_replica_count: config.cluster.channelReplicaN,
    channel_max_loaded_count: 0,
    values: redactedValues(config),
  }));

  app.get('/debug/cluster', { ...route, schema: { response: { 200: DebugCluster, ...errors } } }, async () => ({
    node_id: config.node.id,
    state_revision: 0,
    slots: [],
  }));

  const diagSchema = { querystring: DiagnosticsQuery, response: { 200: DiagnosticsResult, ...errors } };
  app.get(
    '/debug/diagnostics/trace/:trace_id',
    { ...route, schema: { ...diagSchema, params: Type.Object({ trace_id: Type.String() }) } },
    async (request) => diagnose(() => diagnostics.byTrace(request.params.trace_id, request.query)) as DiagnosticsResult,
  );
  app.get(
    '/debug/diagnostics/message',
    { ...route, schema: diagSchema },
    async (request) => diagnose(() => diagnostics.byMessage(request.query)) as DiagnosticsResult,
  );
  app.get(
    '/debug/diagnostics/events',
    { ...route, schema: diagSchema },
    async (request) => diagnose(() => diagnostics.search(request.query)) as DiagnosticsResult,
  );

  app.get('/debug/goroutines', route, async (_request, reply) => reply.type('text/plain; charset=utf-8').send(activeResourcesText()));
  app.get('/debug/goroutines/summary', { ...route, schema: { response: { 200: GoroutineSummary, ...errors } } }, async () =>
    activeResourcesSummary(),
  );

  app.all('/debug/pprof', route, async (_request, reply) => reply.type('text/plain; charset=utf-8').send(pprofIndex()));
  app.all(
    '/debug/pprof/*',
    { ...route, schema: { querystring: Type.Object({ seconds: Type.Optional(Type.String()) }) } },
    async (request, reply) => {
      const name = (request.params as { '*': string })['*'];
      switch (name) {
        case '':
          return reply.type('text/plain; charset=utf-8').send(pprofIndex());
        case 'profile': {
          const raw = request.query.seconds;
          const seconds = raw === undefined || raw === '' ? DEFAULT_PROFILE_SECONDS : /^\d{1,3}$/.test(raw) ? Number(raw) : NaN;
          if (!(seconds >= 1 && seconds <= MAX_PROFILE_SECONDS))
            throw new ApiError(400, 'invalid_seconds', `seconds must be between 1 and ${MAX_PROFILE_SECONDS}`);
          let profile: string;
          try {
            profile = await cpuProfile(seconds);
          } catch (err) {
            if (err instanceof ProfilerBusyError) throw new ApiError(409, 'profiler_busy', err.message);
            throw err;
          }
          return reply.type('application/json').header('content-disposition', 'attachment; filename="profile.cpuprofile"').send(profile);
        }
        case 'heap':
        case 'allocs':
          return reply
            .type('application/json')
            .header('content-disposition', 'attachment; filename="heap.heapsnapshot"')
            .send(heapSnapshot());
        case 'goroutine':
          return reply.type('text/plain; charset=utf-8').send(activeResourcesText());
        case 'cmdline':
          return reply.type('text/plain; charset=utf-8').send(process.argv.join('\u0000'));
        case 'symbol':
          return reply.type('text/plain; charset=utf-8').send('num_symbols: 0\n');
        default:
          throw new ApiError(
            404,
            'unknown_profile',
            PPROF_UNSUPPORTED.includes(name) ? `profile not available on Node.js: ${name}` : `unknown profile: ${name}`,
          );
      }
    },
  );
};
