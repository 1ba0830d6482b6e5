import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ChannelKeyBody, ChannelQuery, LegacyError, MemberListBody, StatusOk } from '@parley/shared';
import { Type } from '@sinclair/typebox';
import type { HttpDeps } from './deps.ts';
import { badRequest } from './errors.ts';
import { requireChannelId, requireUids } from './validate.ts';

const ok = { status: 200 as const };
const config = { errorShape: 'legacy' as const };
const schema = <B>(body: B) => ({ body, response: { 200: StatusOk, 400: LegacyError } });

/** Denylist (`blacklist_*`) and allowlist (`whitelist_*`) of a channel; for a person, the receiver's uid and type 1. */
export const memberListRoutes: FastifyPluginAsyncTypebox<{ deps: HttpDeps }> = async (app, { deps }) => {
  const channels = deps.channels;
  for (const [name, list] of [
    ['blacklist', 'deny'],
    ['whitelist', 'allow'],
  ] as const) {
    const strictId = (id: string) => (list === 'allow' ? requireChannelId(id, 'channel_id不能为空！') : id.trim());
    const key = (b: { channel_id: string; channel_type?: number }) => {
      const channelId = strictId(b.channel_id);
      if (channelId === '') throw badRequest('channel_id不能为空！');
      if (!b.channel_type) throw badRequest('频道类型不能为0！');
      return { channelId, channelType: b.channel_type };
    };

    app.post(`/channel/${name}_add`, { schema: schema(MemberListBody), config }, async (request) => {
      const { channelId, channelType } = key(request.body);
      await channels.addToList(channelId, channelType, list, requireUids(request.body.uids, 'uids不能为空！'));
      return ok;
    });
    app.post(`/channel/${name}_remove`, { schema: schema(MemberListBody), config }, async (request) => {
      const { channelId, channelType } = key(request.body);
      await channels.removeFromList(channelId, channelType, list, requireUids(request.body.uids, 'uids不能为空！'));
      return ok;
    });
    app.post(`/channel/${name}_remove_all`, { schema: schema(ChannelKeyBody), config }, async (request) => {
      const { channelId, channelType } = key(request.body);
      await channels.clearList(channelId, channelType, list);
      return ok;
    });
    app.post(`/channel/${name}_set`, { schema: schema(MemberListBody), config }, async (request) => {
      const b = request.body;
      const channelId = b.channel_id.trim();
      if (channelId === '') throw badRequest('频道ID不能为空！');
      const uids = (b.uids ?? []).map((u) => u.trim()).filter((u) => u !== '');
      await channels.clearList(channelId, b.channel_type ?? 0, list);
      if (uids.length > 0) await channels.addToList(channelId, b.channel_type ?? 0, list, uids);
      return ok;
    });
  }

  app.get(
    '/channel/whitelist',
    {
      schema: {
        querystring: ChannelQuery,
        response: { 200: Type.Array(Type.Object({ id: Type.Integer(), uid: Type.String() })), 400: LegacyError },
      },
      config,
    },
    async (request) => {
      const channelId = (request.query.channel_id ?? '').trim();
      if (channelId === '') throw badRequest('channel_id不能为空！');
      const type = /^\d{1,3}$/.test(request.query.channel_type ?? '') ? Number(request.query.channel_type) : 0;
      return (await deps.channels.listMembers(channelId, type, 'allow')).map((uid) => ({ id: 0, uid }));
    },
  );
};
