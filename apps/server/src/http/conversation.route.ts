import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  ConversationListBody,
  ConversationMutationBody,
  ConversationPage,
  ConversationRetryBody,
  ConversationSyncBody,
  ConversationSyncItem,
  LegacyError,
  StatusOk,
} from '@parley/shared';
import { Type } from '@sinclair/typebox';
import { ConversationRejected, MAX_PAGE, type VisibleConversation } from '../messaging/conversation.service.ts';
import { knownKey, parseLastMsgSeqs } from '../messaging/last-msg-seqs.ts';
import type { HttpDeps } from './deps.ts';
import { badRequest } from './errors.ts';
import { SMALL_BODY_BYTES } from './limits.ts';

const config = { errorShape: 'legacy' as const };

async function guard<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof ConversationRejected) throw badRequest(err.message, 'conversation_rejected');
    throw err;
  }
}

/** The conversation directory and its monotonic mutations. */
export const conversationRoutes: FastifyPluginAsyncTypebox<{ deps: HttpDeps }> = async (app, { deps }) => {
  const conv = deps.conversations;

  app.post(
    '/conversation/list',
    { schema: { body: ConversationListBody, response: { 200: ConversationPage, 400: LegacyError } }, config, bodyLimit: SMALL_BODY_BYTES },
    async (request) => {
      const b = request.body;
      const uid = b.uid.trim();
      if (uid === '') throw badRequest('uid不能为空！');
      if ((b.limit ?? 0) > MAX_PAGE) throw badRequest(`limit must be at most ${MAX_PAGE}`);
      if ((b.completed_coverage ?? 0) < 0) throw badRequest('completed_coverage cannot be negative');
      return guard(() => conv.list(uid, b.cursor ?? '', b.limit ?? 0));
    },
  );

  app.post(
    '/conversation/retry',
    { schema: { body: ConversationRetryBody, response: { 200: ConversationPage, 400: LegacyError } }, config },
    async (request) => {
      const b = request.body;
      const uid = b.uid.trim();
      if (uid === '' || b.channels.length === 0) throw badRequest('uid或channels不能为空！');
      if (b.channels.some((c) => c.channel_id.trim() === '' || c.channel_type === 0)) throw badRequest('channel_id或channel_type错误！');
      return guard(() => conv.retry(uid, b.channels));
    },
  );

  const mutations = [
    ['/conversations/clearUnread', (uid: string, id: string, type: number) => conv.clearUnread(uid, id, type)],
    ['/conversations/delete', (uid: string, id: string, type: number) => conv.delete(uid, id, type)],
    ['/conversations/activate', (uid: string, id: string, type: number) => conv.activate(uid, id, type)],
  ] as const;
  for (const [path, run] of mutations) {
    app.post(
      path,
      { schema: { body: ConversationMutationBody, response: { 200: StatusOk, 400: LegacyError } }, config, bodyLimit: SMALL_BODY_BYTES },
      async (request) => {
        const b = request.body;
        const uid = (b.uid ?? '').trim();
        if (uid === '') throw badRequest('uid cannot be empty');
        if ((b.channel_id ?? '').trim() === '' || !b.channel_type) throw badRequest('channel_id or channel_type cannot be empty');
        await guard(() => run(uid, b.channel_id!.trim(), b.channel_type!));
        return { status: 200 as const };
      },
    );
  }

  app.post(
    '/conversations/setUnread',
    { schema: { body: ConversationMutationBody, response: { 200: StatusOk, 400: LegacyError } }, config, bodyLimit: SMALL_BODY_BYTES },
    async (request) => {
      const b = request.body;
      const uid = (b.uid ?? '').trim();
      if (uid === '') throw badRequest('UID cannot be empty');
      if ((b.channel_id ?? '').trim() === '' || !b.channel_type) throw badRequest('channel_id or channel_type cannot be empty');
      if ((b.unread ?? 0) < 0) throw badRequest('unread cannot be negative');
      await guard(() => conv.setUnread(uid, b.channel_id!.trim(), b.channel_type!, b.unread ?? 0));
      return { status: 200 as const };
    },
  );

  app.post(
    '/conversation/sync',
    {
      schema: { body: ConversationSyncBody, response: { 200: Type.Array(ConversationSyncItem), 400: LegacyError } },
      config: { ...config, bindMessage: 'invalid request' },
    },
    async (request) => {
      const b = request.body;
      const uid = b.uid.trim();
      if (uid === '') throw badRequest('invalid request');
      const known = parseLastMsgSeqs(uid, b.last_msg_seqs ?? '');
      if (!known) throw badRequest('invalid last_msg_seqs', 'invalid_last_msg_seqs');
      const exclude = new Set(b.exclude_channel_types ?? []);
      const limit = !b.limit ? 200 : b.limit;
      const all = await conv.all(uid, Number.MAX_SAFE_INTEGER);
      // A conversation the client already holds up to its newest message is unchanged: left out.
      const held = (c: VisibleConversation) => known.get(knownKey(c.channelId, c.item.channel_type));
      const changed = (c: VisibleConversation) => (held(c) ?? -1) < (c.last?.messageSeq ?? 0);
      const picked = all
        .filter((c) => !exclude.has(c.item.channel_type) && (b.only_unread !== 1 || c.item.unread > 0) && changed(c))
        .slice(0, limit);
      const msgCount = b.msg_count ?? 0;
      return Promise.all(
        picked.map(async (c) => {
          const { item, last } = c;
          // Recents stop above the client's held seq: it has those already.
          const recents =
            msgCount > 0 && last
              ? (
                  await deps.sync.pull({
                    loginUid: uid,
                    channelId: item.channel_id,
                    channelType: item.channel_type,
                    startSeq: 0,
                    endSeq: held(c) ?? 0,
                    limit: msgCount,
                    pullMode: 0,
                  })
                ).messages.reverse()
              : [];
          return {
            channel_id: item.channel_id,
            channel_type: item.channel_type,
            unread: item.unread,
            timestamp: last ? Math.floor(last.createdAt / 1000) : 0,
            last_msg_seq: last?.messageSeq ?? 0,
            last_client_msg_no: last?.clientMsgNo ?? '',
            offset_msg_seq: 0,
            readed_to_msg_seq: item.read_seq,
            version: last?.createdAt ?? 0,
            ...(recents.length > 0 ? { recents } : {}),
          };
        }),
      );
    },
  );
};
