import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  DebugCluster,
  DebugConfig,
  DiagnosticsQuery,
  DiagnosticsResult,
  DiagnosticsTraceParams,
  ErrorBody,
  GoroutineSummary,
  PprofQuery,
} from '@parley/shared';
import { BEARER_REQUIRED, bearerAllows } from '../observe/bearer.ts';
import { debugCluster, debugConfig, pprof, pprofIndex } from '../observe/debug.service.ts';
import type { DiagnosticsStore } from '../observe/diagnostics.ts';
import type { Ops } from '../observe/ops.ts';
import { activeResourcesSummary, activeResourcesText } from '../observe/profiler.ts';
import { errorBody } from './errors.ts';

const errors = { 400: ErrorBody, 401: ErrorBody, 404: ErrorBody };
const TEXT = 'text/plain; charset=utf-8';

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

  app.get('/debug/config', { ...route, schema: { response: { 200: DebugConfig, ...errors } } }, async () => debugConfig(config));
  app.get('/debug/cluster', { ...route, schema: { response: { 200: DebugCluster, ...errors } } }, async () =>
    ops.inputs.cluster ? ops.inputs.cluster.debug() : debugCluster(config),
  );

  const diagSchema = { querystring: DiagnosticsQuery, response: { 200: DiagnosticsResult, ...errors } };
  app.get('/debug/diagnostics/trace/:trace_id', { ...route, schema: { ...diagSchema, params: DiagnosticsTraceParams } }, async (request) =>
    diagnostics.byTrace(request.params.trace_id, request.query),
  );
  app.get('/debug/diagnostics/message', { ...route, schema: diagSchema }, async (request) => diagnostics.byMessage(request.query));
  app.get('/debug/diagnostics/events', { ...route, schema: diagSchema }, async (request) => diagnostics.search(request.query));

  app.get('/debug/goroutines', route, async (_request, reply) => reply.type(TEXT).send(activeResourcesText()));
  app.get('/debug/goroutines/summary', { ...route, schema: { response: { 200: GoroutineSummary, ...errors } } }, async () =>
    activeResourcesSummary(),
  );

  app.all('/debug/pprof', route, async (_request, reply) => reply.type(TEXT).send(pprofIndex()));
  app.all('/debug/pprof/*', { ...route, schema: { querystring: PprofQuery } }, async (request, reply) => {
    const answer = await pprof((request.params as { '*': string })['*'], request.query.seconds);
    if (answer.filename) reply.header('content-disposition', `attachment; filename="${answer.filename}"`);
    return reply.type(answer.type).send(answer.body);
  });
};
