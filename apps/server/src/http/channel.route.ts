import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ChannelBody, ChannelInfoBody, ChannelKeyBody, LegacyError, StatusOk, SubscriberBody, TmpSubscriberBody } from '@parley/shared';
import type { HttpDeps } from './deps.ts';

const schema = <B>(body: B) => ({ body, response: { 200: StatusOk, 400: LegacyError } });
const config = { errorShape: 'legacy' as const };

/** Channel metadata and subscribers. */
export const channelRoutes: FastifyPluginAsyncTypebox<{ deps: HttpDeps }> = async (app, { deps }) => {
  const channels = deps.api.channels;
  app.post('/channel', { schema: schema(ChannelBody), config }, (request) => channels.upsert(request.body));
  app.post('/channel/subscriber_add', { schema: schema(SubscriberBody), config }, (request) => channels.addSubscribers(request.body));
  app.post('/channel/subscriber_remove', { schema: schema(SubscriberBody), config }, (request) => channels.removeSubscribers(request.body));
  app.post('/channel/info', { schema: schema(ChannelInfoBody), config }, (request) => channels.info(request.body));
  app.post('/channel/delete', { schema: schema(ChannelKeyBody), config }, (request) => channels.disband(request.body));
  app.post('/channel/subscriber_remove_all', { schema: schema(ChannelKeyBody), config }, (request) =>
    channels.removeAllSubscribers(request.body),
  );
  app.post('/tmpchannel/subscriber_set', { schema: schema(TmpSubscriberBody), config }, (request) =>
    channels.setTempSubscribers(request.body),
  );
};
