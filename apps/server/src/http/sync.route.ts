import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  ChannelQuery,
  ExactQueryBody,
  ExactQueryResult,
  LastMessageResult,
  LegacyError,
  MaxMessageSeqResult,
  MessageSyncBatchBody,
  MessageSyncBatchResult,
  MessageSyncBody,
  MessageSyncResult,
} from '@parley/shared';
import type { HttpDeps } from './deps.ts';

const config = { errorShape: 'legacy' as const };
const schema = <B, R>(body: B, result: R) => ({ body, response: { 200: result, 400: LegacyError } });
const query = <R>(result: R) => ({ querystring: ChannelQuery, response: { 200: result, 400: LegacyError } });

/** Channel message pulls: single, batch, tail probes and the exact query. */
export const syncRoutes: FastifyPluginAsyncTypebox<{ deps: HttpDeps }> = async (app, { deps }) => {
  const sync = deps.api.sync;
  app.post('/channel/messagesync', { schema: schema(MessageSyncBody, MessageSyncResult), config }, (request) =>
    sync.messageSync(request.body),
  );
  app.post('/channel/messagesyncbatch', { schema: schema(MessageSyncBatchBody, MessageSyncBatchResult), config }, (request) =>
    sync.messageSyncBatch(request.body),
  );
  app.get('/channel/max_message_seq', { schema: query(MaxMessageSeqResult), config }, (request) => sync.maxMessageSeq(request.query));
  app.get('/channel/last_message', { schema: query(LastMessageResult), config }, (request) => sync.lastMessage(request.query));
  app.post('/messages', { schema: schema(ExactQueryBody, ExactQueryResult), config }, (request) => sync.exact(request.body));
};
