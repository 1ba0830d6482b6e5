import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ChannelBody, ChannelType, LegacyError, MemberListBody, StatusOk, SubscriberBody } from '@parley/shared';
import { badRequest } from './errors.ts';
import type { HttpDeps } from './deps.ts';
import { requireChannelId, requireUids } from './validate.ts';

const ok = { status: 200 as const };
const schema = <B>(body: B) => ({ body, response: { 200: StatusOk, 400: LegacyError } });
const config = { errorShape: 'legacy' as const };

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
    await channels.upsert(channelId, b.channel_type, {
      ban: b.ban === undefined ? undefined : b.ban === 1 ? 1 : 0,
      disband: b.disband === 1 ? 1 : undefined,
      large: b.large === undefined ? undefined : b.large === 1 ? 1 : 0,
      sendBan: b.send_ban === undefined ? undefined : b.send_ban === 1 ? 1 : 0,
      allowStranger: b.allow_stranger === undefined ? undefined : b.allow_stranger === 1 ? 1 : 0,
    });
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

  for (const [path, list, op] of [
    ['/channel/blacklist_add', 'deny', 'add'],
    ['/channel/blacklist_remove', 'deny', 'remove'],
    ['/channel/whitelist_add', 'allow', 'add'],
    ['/channel/whitelist_remove', 'allow', 'remove'],
  ] as const) {
    app.post(path, { schema: schema(MemberListBody), config }, async (request) => {
      const b = request.body;
      const channelId = b.channel_id.trim();
      if (channelId === '') throw badRequest('channel_id不能为空！');
      if (!b.channel_type) throw badRequest('频道类型不能为0！');
      const uids = requireUids(b.uids, 'uids不能为空！');
      if (op === 'add') await channels.addToList(channelId, b.channel_type, list, uids);
      else await channels.removeFromList(channelId, b.channel_type, list, uids);
      return ok;
    });
  }
};
