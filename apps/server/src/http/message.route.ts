import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ErrorBody, MessageSendBody, MessageSendResult, SendBatchBody, SendBatchResult } from '@parley/shared';
import type { HttpDeps } from './deps.ts';

const config = { errorShape: 'error' as const, bindMessage: 'invalid request' };

/** Backend sends: `/message/send` and the v2 `/message/sendbatch`. */
export const messageRoutes: FastifyPluginAsyncTypebox<{ deps: HttpDeps }> = async (app, { deps }) => {
  const messages = deps.api.messages;
  app.post(
    '/message/send',
    { schema: { body: MessageSendBody, response: { 200: MessageSendResult, '4xx': ErrorBody } }, config },
    (request) => messages.send(request.body),
  );
  app.post(
    '/message/sendbatch',
    { schema: { body: SendBatchBody, response: { 200: SendBatchResult, '4xx': ErrorBody } }, config },
    (request) => messages.sendBatch(request.body),
  );
};
