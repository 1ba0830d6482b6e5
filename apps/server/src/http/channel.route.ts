import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  ChannelBody,
  ChannelInfoBody,
  ChannelKeyBody,
  ChannelType,
  LegacyError,
  StatusOk,
  SubscriberBody,
  TmpSubscriberBody,
} from '@parley/shared';
import type { ChannelFlags } from '@parley/store';
import { badRequest } from './errors.ts';
import type { HttpDeps } from './deps.ts';
import { requireChannelId, requireUids } from './validate.ts';

const ok = { status: 200 as const };
const schema = <B>(body: B) => ({ body, response: { 200: StatusOk, 400: LegacyError } });
const config = { errorShape: 'legacy' as const };

/** The info flags a body sets (`1` = on, any other value = off; absent = unchanged). `disband` only ever turns on. */
function flagsOf(b: ChannelInfoBody): Partial<ChannelFlags> {
  const bit = (v: number | undefined) => (v === undefined ? undefined : v === 1 ? 1 : 0);
  return {
    ban: bit(b.ban),
    disband: b.disband === 1 ? 1 : undefined,
    large: bit(b.large),
    sendBan: bit(b.send_ban),
    allowStranger: bit(b.allow_stranger),
  };
}

/** Channel metadata, subscribers and the allow/deny lists. */
export const channelRoutes: FastifyPluginAsyncTypebox<{ deps: HttpDeps }> = async (app, { deps }) => {
  const channels = deps.channels;

  app.post('/channel', { schema: schema(ChannelBody), config }, async (request) => {
    const b = request.body;
    const channelId = requireChannelId(b.channel_id);
    if (b.channel_type === 0) throw badRequest('频道类型错误！');
    if (b.channel_type === ChannelType.Person && b.subscribers && b.subscribers.length > 0) {
      throw badRequest('不支持个人频道添加订阅者！');
    }
    const subscribers = b.subscribers && b.subscribers.length > 0 ? requireUids(b.subscribers) : [];
    await channels.upsert(channelId, b.channel_type, flagsOf(b));
    if (b.reset === 1) await channels.removeAllSubscribers(channelId, b.channel_type);
    if (subscribers.length > 0) await channels.addSubscribers(channelId, b.channel_type, subscribers);
    return ok;
  });

  app.post('/channel/subscriber_add', { schema: schema(SubscriberBody), config }, async (request) => {
    const b = request.body;
    const channelId = requireChannelId(b.channel_id);
    const channelType = b.channel_type === undefined || b.channel_type === 0 ? ChannelType.Group : b.channel_type;
    if (channelType === ChannelType.Person) throw badRequest('个人频道不支持添加订阅者！');
    if (b.temp_subscriber === 1) throw badRequest('新版本临时订阅者已不支持！');
    const uids = requireUids(b.subscribers);
    if (!(await channels.exists(channelId, channelType))) await channels.upsert(channelId, channelType, {});
    if (b.reset === 1) await channels.removeAllSubscribers(channelId, channelType);
    await channels.addSubscribers(channelId, channelType, uids);
    return ok;
  });

  app.post('/channel/subscriber_remove', { schema: schema(SubscriberBody), config }, async (request) => {
    const b = request.body;
    const channelId = requireChannelId(b.channel_id);
    if (!b.channel_type) throw badRequest('频道类型错误！');
    if (b.channel_type === ChannelType.Person) throw badRequest('个人频道不支持添加订阅者！');
    await channels.removeSubscribers(channelId, b.channel_type, requireUids(b.subscribers));
    return ok;
  });

  // Deprecated and, as in WuKongIM, unvalidated: the row is upserted exactly as given (see ChannelInfoBody).
  app.post('/channel/info', { schema: schema(ChannelInfoBody), config }, async (request) => {
    const b = request.body;
    await channels.upsert(b.channel_id ?? '', b.channel_type ?? 0, flagsOf(b));
    return ok;
  });

  app.post('/channel/delete', { schema: schema(ChannelKeyBody), config }, async (request) => {
    const b = request.body;
    const channelId = requireChannelId(b.channel_id);
    if (!b.channel_type) throw badRequest('频道类型错误！');
    if (b.channel_type === ChannelType.Person) throw badRequest('个人频道不支持添加订阅者！');
    if (!(await channels.exists(channelId, b.channel_type))) throw badRequest('channel not found', 'channel_not_found');
    await channels.upsert(channelId, b.channel_type, { disband: 1 });
    return ok;
  });

  app.post('/channel/subscriber_remove_all', { schema: schema(ChannelKeyBody), config }, async (request) => {
    const b = request.body;
    const channelId = requireChannelId(b.channel_id);
    if (!b.channel_type) throw badRequest('频道类型错误！');
    if (b.channel_type === ChannelType.Person) throw badRequest('个人频道不支持此操作！');
    await channels.removeAllSubscribers(channelId, b.channel_type);
    return ok;
  });

  app.post('/tmpchannel/subscriber_set', { schema: schema(TmpSubscriberBody), config }, async (request) => {
    const b = request.body;
    const channelId = requireChannelId(b.channel_id);
    const uids = requireUids(b.uids, 'uids不能为空！');
    await channels.clearList(channelId, ChannelType.Temp, 'temp');
    await channels.addToList(channelId, ChannelType.Temp, 'temp', uids);
    return ok;
  });
};
