import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { EventSyncBody, EventSyncResult, LegacyError, MessageEventBody, MessageEventResult } from '@parley/shared';
import type { HttpDeps } from './deps.ts';

const config = { errorShape: 'legacy' as const };

/** Stream events of messages: append (`/message/event`) and read back (`/message/eventsync`). */
export const eventRoutes: FastifyPluginAsyncTypebox<{ deps: HttpDeps }> = async (app, { deps }) => {
  const events = deps.api.events;
  app.post(
    '/message/event',
    { schema: { body: MessageEventBody, response: { 200: MessageEventResult, 400: LegacyError } }, config },
    (request) => events.append(request.body),
  );
  app.post(
    '/message/eventsync',
    { schema: { body: EventSyncBody, response: { 200: EventSyncResult, 400: LegacyError } }, config },
    (request) => events.sync(request.body),
  );
};
