import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ChannelKeyBody, ChannelQuery, LegacyError, MemberListBody, StatusOk, WhitelistResult } from '@parley/shared';
import type { HttpDeps } from './deps.ts';

const config = { errorShape: 'legacy' as const };
const schema = <B>(body: B) => ({ body, response: { 200: StatusOk, 400: LegacyError } });

/** Denylist (`blacklist_*`) and allowlist (`whitelist_*`) of a channel; for a person, the receiver's uid and type 1. */
export const memberListRoutes: FastifyPluginAsyncTypebox<{ deps: HttpDeps }> = async (app, { deps }) => {
  const channels = deps.api.channels;
  for (const [name, list] of [
    ['blacklist', 'deny'],
    ['whitelist', 'allow'],
  ] as const) {
    app.post(`/channel/${name}_add`, { schema: schema(MemberListBody), config }, (request) => channels.listAdd(list, request.body));
    app.post(`/channel/${name}_remove`, { schema: schema(MemberListBody), config }, (request) => channels.listRemove(list, request.body));
    app.post(`/channel/${name}_remove_all`, { schema: schema(ChannelKeyBody), config }, (request) =>
      channels.listRemoveAll(list, request.body),
    );
    app.post(`/channel/${name}_set`, { schema: schema(MemberListBody), config }, (request) => channels.listSet(list, request.body));
  }
  app.get(
    '/channel/whitelist',
    { schema: { querystring: ChannelQuery, response: { 200: WhitelistResult, 400: LegacyError } }, config },
    (request) => channels.whitelist(request.query),
  );
};
