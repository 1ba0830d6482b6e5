import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { CmdBindBody, CmdSyncAckBody, CmdSyncBody, CmdSyncResult, LegacyError, MAX_CMD_BIND_BODY, StatusOk } from '@parley/shared';
import type { HttpDeps } from './deps.ts';

const config = { errorShape: 'legacy' as const };

/** Command-message compatibility: bindings for offline recovery, sync and syncack. */
export const cmdRoutes: FastifyPluginAsyncTypebox<{ deps: HttpDeps }> = async (app, { deps }) => {
  const cmd = deps.api.cmd;
  const bind = { schema: { body: CmdBindBody, response: { 200: StatusOk, '4xx': LegacyError } }, config, bodyLimit: MAX_CMD_BIND_BODY };
  app.post('/message/cmd/bind', bind, (request) => cmd.bind(request.body));
  app.post('/message/cmd/unbind', bind, (request) => cmd.unbind(request.body));
  app.post('/message/sync', { schema: { body: CmdSyncBody, response: { 200: CmdSyncResult, 400: LegacyError } }, config }, (request) =>
    cmd.sync(request.body),
  );
  app.post('/message/syncack', { schema: { body: CmdSyncAckBody, response: { 200: StatusOk, 400: LegacyError } }, config }, (request) =>
    cmd.syncack(request.body),
  );
};
