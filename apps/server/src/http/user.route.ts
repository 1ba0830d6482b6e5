import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { DeviceQuitBody, LegacyError, RouteQuery, RouteResponse, StatusOk, SYSTEM_UID, UserTokenBody } from '@parley/shared';
import { badRequest } from './errors.ts';
import type { HttpDeps } from './deps.ts';
import { checkTokenUid, requireUid } from './validate.ts';
import { SMALL_BODY_BYTES } from './limits.ts';

const legacy = { errorShape: 'legacy' as const };

/** Connection identity: token storage, revocation and route discovery. */
export const userRoutes: FastifyPluginAsyncTypebox<{ deps: HttpDeps }> = async (app, { deps }) => {
  app.post(
    '/user/token',
    {
      schema: { body: UserTokenBody, response: { 200: StatusOk, 400: LegacyError } },
      config: { ...legacy, bindMessage: 'invalid request' },
      bodyLimit: SMALL_BODY_BYTES,
    },
    async (request) => {
      const b = request.body;
      const uid = requireUid(b.uid);
      if (b.token === '') throw badRequest('token不能为空！');
      checkTokenUid(uid);
      if (uid === SYSTEM_UID) throw badRequest('系统账号不允许更新token！');
      await deps.tokens.store(uid, b.token, b.device_flag ?? 0, b.device_level ?? 0, b.device_id ?? '');
      return { status: 200 as const };
    },
  );

  app.post(
    '/user/device_quit',
    { schema: { body: DeviceQuitBody, response: { 200: StatusOk, 400: LegacyError } }, config: legacy, bodyLimit: SMALL_BODY_BYTES },
    async (request) => {
      const { uid, device_flag: flag } = request.body;
      if (![-1, 0, 1, 2].includes(flag)) throw badRequest('device_flag must be -1, 0, 1 or 2');
      if (uid && uid.trim() !== '') await deps.tokens.quit(uid.trim(), flag);
      return { status: 200 as const };
    },
  );

  app.get(
    '/route',
    { schema: { querystring: RouteQuery, response: { 200: RouteResponse, 400: LegacyError } }, config: legacy },
    async (request) => {
      const q = request.query;
      const nodeId = q.node_id ?? q.nodeId ?? q.nodeID;
      if (nodeId !== undefined && nodeId !== String(deps.nodeId)) throw badRequest('节点参数有误！');
      const addresses = deps.routeAddresses(request.hostname);
      if (q.intranet !== undefined && q.intranet !== '' && q.intranet !== '0') {
        return { tcp_addr: addresses.tcp_addr, ws_addr: '', wss_addr: '' };
      }
      return addresses;
    },
  );
};
