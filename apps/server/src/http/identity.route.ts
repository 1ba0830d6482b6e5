import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  ConnBody,
  LegacyError,
  OnlineStatus,
  ReasonCode,
  RouteQuery,
  RouteResponse,
  StatusOk,
  UidArrayBody,
  UidsBody,
} from '@parley/shared';
import { Type } from '@sinclair/typebox';
import type { HttpDeps } from './deps.ts';
import { badRequest } from './errors.ts';
import { SMALL_BODY_BYTES } from './limits.ts';

const ok = { status: 200 as const };
const config = { errorShape: 'legacy' as const };

/** Route batch, online status, system uids and connection kicks. */
export const identityRoutes: FastifyPluginAsyncTypebox<{ deps: HttpDeps }> = async (app, { deps }) => {
  app.post(
    '/route/batch',
    {
      schema: {
        querystring: RouteQuery,
        body: UidArrayBody,
        response: {
          200: Type.Array(Type.Intersect([Type.Object({ uids: Type.Optional(Type.Array(Type.String())) }), RouteResponse])),
          400: LegacyError,
        },
      },
      config,
    },
    async (request) => {
      const a = deps.routeAddresses(request.hostname);
      const uids = request.body;
      return [{ ...(uids.length > 0 ? { uids } : {}), ...a }];
    },
  );

  app.post(
    '/user/onlinestatus',
    { schema: { body: UidArrayBody, response: { 200: Type.Union([StatusOk, Type.Array(OnlineStatus)]), 400: LegacyError } }, config },
    async (request) => {
      if (request.body.length === 0) return ok;
      const out: Array<{ uid: string; device_flag: number; online: number }> = [];
      for (const uid of new Set(request.body)) {
        for (const s of deps.presence.sessionsOf(uid) ?? []) out.push({ uid, device_flag: s.deviceFlag, online: 1 });
      }
      return out;
    },
  );

  const uidsOf = (b: { uids?: string[] }) => (b.uids ?? []).map((u) => u.trim()).filter((u) => u !== '');
  app.post(
    '/user/systemuids_add',
    { schema: { body: UidsBody, response: { 200: StatusOk, 400: LegacyError } }, config },
    async (request) => {
      await deps.systemUids.add(uidsOf(request.body));
      return ok;
    },
  );
  app.post(
    '/user/systemuids_remove',
    { schema: { body: UidsBody, response: { 200: StatusOk, 400: LegacyError } }, config },
    async (request) => {
      await deps.systemUids.remove(uidsOf(request.body));
      return ok;
    },
  );
  app.post(
    '/user/systemuids_add_to_cache',
    { schema: { body: UidsBody, response: { 200: StatusOk, 400: LegacyError } }, config },
    async (request) => {
      deps.systemUids.addToCache(uidsOf(request.body));
      return ok;
    },
  );
  app.post(
    '/user/systemuids_remove_from_cache',
    { schema: { body: UidsBody, response: { 200: StatusOk, 400: LegacyError } }, config },
    async (request) => {
      deps.systemUids.removeFromCache(uidsOf(request.body));
      return ok;
    },
  );
  app.get('/user/systemuids', { schema: { response: { 200: Type.Array(Type.String()) } }, config }, async () => deps.systemUids.list());

  for (const [path, kick] of [
    ['/conn/kick', true],
    ['/conn/remove', false],
  ] as const) {
    app.post(
      path,
      { schema: { body: ConnBody, response: { 200: StatusOk, 400: LegacyError } }, config, bodyLimit: SMALL_BODY_BYTES },
      async (request) => {
        const b = request.body;
        const uid = b.uid.trim();
        if (uid === '') throw badRequest('uid不能为空！');
        if (b.node_id !== undefined && b.node_id !== 0 && b.node_id !== deps.nodeId) throw badRequest('节点参数有误！');
        for (const s of [...(deps.presence.sessionsOf(uid) ?? [])]) {
          if (s.id !== b.conn_id) continue;
          if (kick) s.kick(ReasonCode.ConnectKick, 'login in other device');
          else s.close('removed by the backend');
        }
        return ok;
      },
    );
  }
};
