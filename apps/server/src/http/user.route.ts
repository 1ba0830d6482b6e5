import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { DeviceQuitBody, LegacyError, RouteQuery, RouteResponse, StatusOk, UserTokenBody } from '@parley/shared';
import type { HttpDeps } from './deps.ts';
import { SMALL_BODY_BYTES } from './limits.ts';

const legacy = { errorShape: 'legacy' as const };

/** Connection identity: token storage, revocation and route discovery. */
export const userRoutes: FastifyPluginAsyncTypebox<{ deps: HttpDeps }> = async (app, { deps }) => {
  const users = deps.api.users;
  app.post(
    '/user/token',
    {
      schema: { body: UserTokenBody, response: { 200: StatusOk, 400: LegacyError } },
      config: { ...legacy, bindMessage: 'invalid request' },
      bodyLimit: SMALL_BODY_BYTES,
    },
    (request) => users.storeToken(request.body),
  );
  app.post(
    '/user/device_quit',
    { schema: { body: DeviceQuitBody, response: { 200: StatusOk, 400: LegacyError } }, config: legacy, bodyLimit: SMALL_BODY_BYTES },
    (request) => users.deviceQuit(request.body),
  );
  app.get(
    '/route',
    { schema: { querystring: RouteQuery, response: { 200: RouteResponse, 400: LegacyError } }, config: legacy },
    async (request) => users.route(request.query, request.hostname),
  );
};
