import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  ConversationListBody,
  ConversationMutationBody,
  ConversationPage,
  ConversationRetryBody,
  ConversationSyncBody,
  ConversationSyncResult,
  LegacyError,
  StatusOk,
} from '@parley/shared';
import type { HttpDeps } from './deps.ts';
import { SMALL_BODY_BYTES } from './limits.ts';

const config = { errorShape: 'legacy' as const };
const schema = <B, R>(body: B, result: R) => ({ body, response: { 200: result, 400: LegacyError } });
const small = { config, bodyLimit: SMALL_BODY_BYTES };

/** The conversation directory and its monotonic mutations. */
export const conversationRoutes: FastifyPluginAsyncTypebox<{ deps: HttpDeps }> = async (app, { deps }) => {
  const conv = deps.api.conversations;
  app.post('/conversation/list', { schema: schema(ConversationListBody, ConversationPage), ...small }, (request) =>
    conv.list(request.body),
  );
  app.post('/conversation/retry', { schema: schema(ConversationRetryBody, ConversationPage), config }, (request) =>
    conv.retry(request.body),
  );
  const mutation = schema(ConversationMutationBody, StatusOk);
  app.post('/conversations/clearUnread', { schema: mutation, ...small }, (request) => conv.clearUnread(request.body));
  app.post('/conversations/delete', { schema: mutation, ...small }, (request) => conv.delete(request.body));
  app.post('/conversations/activate', { schema: mutation, ...small }, (request) => conv.activate(request.body));
  app.post('/conversations/setUnread', { schema: mutation, ...small }, (request) => conv.setUnread(request.body));
  app.post(
    '/conversation/sync',
    { schema: schema(ConversationSyncBody, ConversationSyncResult), config: { ...config, bindMessage: 'invalid request' } },
    (request) => conv.sync(request.body),
  );
};
