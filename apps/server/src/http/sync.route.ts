import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  ChannelQuery,
  ExactQueryBody,
  ExactQueryResult,
  LegacyError,
  MessageResp,
  MessageSyncBatchBody,
  MessageSyncBody,
  MessageSyncResult,
} from '@parley/shared';
import { Type } from '@sinclair/typebox';
import { SyncRejected } from '../messaging/sync.service.ts';
import type { HttpDeps } from './deps.ts';
import { badRequest } from './errors.ts';

const config = { errorShape: 'legacy' as const };
/** Most items one `/channel/messagesyncbatch` may carry. */
const MAX_BATCH = 200;

async function guard<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof SyncRejected) throw badRequest(err.message, 'sync_rejected');
    throw err;
  }
}

function checkItem(b: { channel_id: string; channel_type: number }): void {
  if (b.channel_id.trim() === '') throw badRequest('channel_id不能为空！');
  if (b.channel_type === 0) throw badRequest('channel_type不能为空！');
}

function channelQuery(q: { channel_id?: string; channel_type?: string; login_uid?: string }) {
  const loginUid = (q.login_uid ?? '').trim();
  const channelId = (q.channel_id ?? '').trim();
  const channelType = /^\d{1,3}$/.test(q.channel_type ?? '') ? Number(q.channel_type) : 0;
  if (loginUid === '') throw badRequest('login_uid不能为空！');
  if (channelId === '') throw badRequest('channel_id不能为空！');
  if (channelType === 0 || channelType > 255) throw badRequest('channel_type不能为空！');
  return { loginUid, channelId, channelType };
}

/** Channel message pulls: single, batch, tail probes and the exact query. */
export const syncRoutes: FastifyPluginAsyncTypebox<{ deps: HttpDeps }> = async (app, { deps }) => {
  app.post(
    '/channel/messagesync',
    { schema: { body: MessageSyncBody, response: { 200: MessageSyncResult, 400: LegacyError } }, config },
    async (request) => {
      const b = request.body;
      const loginUid = b.login_uid.trim();
      if (loginUid === '') throw badRequest('login_uid不能为空！');
      checkItem(b);
      return guard(() =>
        deps.sync.pull({
          loginUid,
          channelId: b.channel_id.trim(),
          channelType: b.channel_type,
          startSeq: b.start_message_seq ?? 0,
          endSeq: b.end_message_seq ?? 0,
          limit: b.limit ?? 0,
          pullMode: b.pull_mode ?? 0,
          includeEventMeta: (b.include_event_meta ?? 0) !== 0,
          eventSummaryMode: b.event_summary_mode ?? '',
        }),
      );
    },
  );

  app.post(
    '/channel/messagesyncbatch',
    {
      schema: {
        body: MessageSyncBatchBody,
        response: {
          200: Type.Object({
            items: Type.Array(
              Type.Intersect([
                MessageSyncResult,
                Type.Object({ channel_id: Type.String(), channel_type: Type.Integer(), error: Type.Optional(Type.String()) }),
              ]),
            ),
          }),
          400: LegacyError,
        },
      },
      config,
    },
    async (request) => {
      const b = request.body;
      const loginUid = b.login_uid.trim();
      if (loginUid === '') throw badRequest('login_uid不能为空！');
      if (b.items.length === 0) throw badRequest('internal/message: batch message sync items required');
      if (b.items.length > MAX_BATCH) throw badRequest(`internal/message: batch message sync exceeds ${MAX_BATCH} items`);
      b.items.forEach(checkItem);
      const items = await guard(() =>
        deps.sync.pullBatch(
          loginUid,
          b.items.map((i) => ({
            channelId: i.channel_id.trim(),
            channelType: i.channel_type,
            startSeq: i.start_message_seq ?? 0,
            endSeq: i.end_message_seq ?? 0,
            limit: i.limit ?? 0,
            pullMode: i.pull_mode ?? 0,
            includeEventMeta: (i.include_event_meta ?? 0) !== 0,
            eventSummaryMode: i.event_summary_mode ?? '',
          })),
        ),
      );
      return { items };
    },
  );

  app.get(
    '/channel/max_message_seq',
    { schema: { querystring: ChannelQuery, response: { 200: Type.Object({ message_seq: Type.Integer() }), 400: LegacyError } }, config },
    async (request) => {
      const q = channelQuery(request.query);
      return { message_seq: await guard(() => deps.sync.maxSeq(q.loginUid, q.channelId, q.channelType)) };
    },
  );

  app.get(
    '/channel/last_message',
    { schema: { querystring: ChannelQuery, response: { 200: Type.Partial(MessageResp), 400: LegacyError } }, config },
    async (request) => {
      const q = channelQuery(request.query);
      return (await guard(() => deps.sync.lastMessage(q.loginUid, q.channelId, q.channelType))) ?? {};
    },
  );

  app.post(
    '/messages',
    { schema: { body: ExactQueryBody, response: { 200: ExactQueryResult, 400: LegacyError } }, config },
    async (request) => {
      const b = request.body;
      const loginUid = b.login_uid.trim();
      if (loginUid === '') throw badRequest('login_uid不能为空！');
      checkItem(b);
      const messages = await guard(() =>
        deps.sync.exact({
          loginUid,
          channelId: b.channel_id.trim(),
          channelType: b.channel_type,
          messageIds: (b.message_ids ?? []).map((id) => BigInt(id)),
          messageSeqs: b.message_seqs ?? [],
          clientMsgNos: b.client_msg_nos ?? [],
        }),
      );
      return { start_message_seq: 0, end_message_seq: 0, more: 0, messages };
    },
  );
};
