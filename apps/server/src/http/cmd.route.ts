import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  CmdBindBody,
  CmdSyncAckBody,
  CmdSyncBody,
  LegacyError,
  MAX_CMD_BIND_BODY,
  MAX_CMD_BIND_ITEMS,
  MessageResp,
  StatusOk,
} from '@parley/shared';
import { Type } from '@sinclair/typebox';
import { CmdRejected } from '../messaging/cmd.service.ts';
import type { HttpDeps } from './deps.ts';
import { ApiError, badRequest } from './errors.ts';

const config = { errorShape: 'legacy' as const };

/** Command-message compatibility: bindings for offline recovery, sync and syncack. */
export const cmdRoutes: FastifyPluginAsyncTypebox<{ deps: HttpDeps }> = async (app, { deps }) => {
  for (const [path, bind] of [
    ['/message/cmd/bind', true],
    ['/message/cmd/unbind', false],
  ] as const) {
    app.post(
      path,
      { schema: { body: CmdBindBody, response: { 200: StatusOk, '4xx': LegacyError } }, config, bodyLimit: MAX_CMD_BIND_BODY },
      async (request) => {
        const b = request.body;
        const list =
          b.uids && b.uids.length > 0
            ? b.uids
            : b.subscribers && b.subscribers.length > 0
              ? b.subscribers
              : b.uid !== undefined
                ? [b.uid]
                : [];
        const uids = list.map((u) => u.trim());
        const channelId = (b.channel_id ?? '').trim();
        if (uids.length === 0 || uids.some((u) => u === '') || channelId === '' || !b.channel_type) {
          throw badRequest('uid、channel_id和channel_type不能为空！');
        }
        if (uids.length > MAX_CMD_BIND_ITEMS) throw new ApiError(400, 'too_many_items', `at most ${MAX_CMD_BIND_ITEMS} uids per batch`);
        try {
          if (bind) await deps.cmd.bind(uids, channelId, b.channel_type);
          else await deps.cmd.unbind(uids, channelId, b.channel_type);
        } catch (err) {
          if (err instanceof CmdRejected) throw badRequest(err.message);
          throw err;
        }
        return { status: 200 as const };
      },
    );
  }

  app.post(
    '/message/sync',
    { schema: { body: CmdSyncBody, response: { 200: Type.Array(MessageResp), 400: LegacyError } }, config },
    async (request) => {
      const uid = (request.body.uid ?? '').trim();
      if (uid === '') throw badRequest('uid不能为空！');
      if ((request.body.limit ?? 0) < 0) throw badRequest('limit不能为负数！');
      return deps.cmd.sync(uid, request.body.limit ?? 0);
    },
  );

  app.post(
    '/message/syncack',
    { schema: { body: CmdSyncAckBody, response: { 200: StatusOk, 400: LegacyError } }, config },
    async (request) => {
      const uid = (request.body.uid ?? '').trim();
      if (uid === '') throw badRequest('uid不能为空！');
      if (!request.body.last_message_seq) throw badRequest('last_message_seq不能为空！');
      await deps.cmd.syncack(uid);
      return { status: 200 as const };
    },
  );
};
