import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ErrorBody, TopQuery, TopSnapshot } from '@parley/shared';
import type { Ops } from '../observe/ops.ts';
import { topSnapshot } from '../observe/snapshot.ts';

/**
 * `GET /top/v1/snapshot`: node-local, read-only, no authentication.
 * Registered always; 404 when `top.api_enable` is false, 503 while the
 * collector has fewer than two samples inside the window, 400 on a bad query.
 */
export const topRoutes: FastifyPluginAsyncTypebox<{ ops: Ops }> = async (app, { ops }) => {
  app.get(
    '/top/v1/snapshot',
    {
      config: { errorShape: 'error', bindMessage: 'invalid query' },
      schema: {
        description: 'Top snapshot (top/v1). See the field descriptions for Node.js mappings of Go-shaped fields.',
        querystring: TopQuery,
        response: { 200: TopSnapshot, 400: ErrorBody, 404: ErrorBody, 503: ErrorBody },
      },
    },
    async (request) => topSnapshot(ops.snapshot, request.query),
  );
};
