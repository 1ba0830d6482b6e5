import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  ConnBody,
  LegacyError,
  OnlineStatusResult,
  RouteBatchResult,
  RouteQuery,
  StatusOk,
  SystemUidsResult,
  UidArrayBody,
  UidsBody,
} from '@parley/shared';
import type { HttpDeps } from './deps.ts';
import { SMALL_BODY_BYTES } from './limits.ts';

const config = { errorShape: 'legacy' as const };
const uids = { schema: { body: UidsBody, response: { 200: StatusOk, 400: LegacyError } }, config };
const conn = { schema: { body: ConnBody, response: { 200: StatusOk, 400: LegacyError } }, config, bodyLimit: SMALL_BODY_BYTES };

/** Route batch, online status, system uids and connection kicks. */
export const identityRoutes: FastifyPluginAsyncTypebox<{ deps: HttpDeps }> = async (app, { deps }) => {
  const users = deps.api.users;
  app.post(
    '/route/batch',
    { schema: { querystring: RouteQuery, body: UidArrayBody, response: { 200: RouteBatchResult, 400: LegacyError } }, config },
    async (request) => users.routeBatch(request.body, request.hostname),
  );
  app.post(
    '/user/onlinestatus',
    { schema: { body: UidArrayBody, response: { 200: OnlineStatusResult, 400: LegacyError } }, config },
    async (request) => users.onlineStatus(request.body),
  );
  app.post('/user/systemuids_add', uids, (request) => users.addSystemUids(request.body));
  app.post('/user/systemuids_remove', uids, (request) => users.removeSystemUids(request.body));
  app.post('/user/systemuids_add_to_cache', uids, async (request) => users.addSystemUidsToCache(request.body));
  app.post('/user/systemuids_remove_from_cache', uids, async (request) => users.removeSystemUidsFromCache(request.body));
  app.get('/user/systemuids', { schema: { response: { 200: SystemUidsResult } }, config }, async () => users.systemUids());
  app.post('/conn/kick', conn, async (request) => users.kick(request.body));
  app.post('/conn/remove', conn, async (request) => users.removeConnection(request.body));
};
