import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  ErrorBody,
  LegacyError,
  MessageSendBody,
  MessageSendResult,
  MessageSyncBody,
  MessageSyncResult,
} from '@parley/shared';
import { SyncRejected } from '../messaging/sync.service.ts';
import { ApiError, badRequest } from './errors.ts';
import type { HttpDeps } from './deps.ts';

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Backend send and channel message pull. */
export const messageRoutes: FastifyPluginAsyncTypebox<{ deps: HttpDeps }> = async (app, { deps }) => {
  app.post(
    '/message/send',
    {
      schema: { body: MessageSendBody, response: { 200: MessageSendResult, '4xx': ErrorBody } },
      config: { errorShape: 'error', bindMessage: 'invalid request' },
    },
    async (request) => {
      const b = request.body;
      const fromUid = (b.from_uid || b.sender_uid || '').trim();
      if (fromUid === '' || b.payload === '') throw badRequest('invalid request');
      if (b.subscribers && b.subscribers.length > 0) {
        throw new ApiError(400, 'unsupported', 'request-scoped subscribers are not supported by this server version');
      }
      if (!BASE64.test(b.payload)) throw badRequest('invalid payload', 'invalid_payload');
      const header = b.header ?? {};
      const outcome = await deps.send.send({
        fromUid,
        deviceId: b.device_id ?? '',
        channelId: (b.channel_id ?? '').trim(),
        channelType: b.channel_type ?? 0,
        payload: Buffer.from(b.payload, 'base64'),
        clientMsgNo: b.client_msg_no ?? '',
        setting: b.setting ?? 0,
        topic: b.topic ?? '',
        expire: b.expire ?? 0,
        redDot: (header.red_dot ?? b.red_dot ?? 0) !== 0,
        syncOnce: (header.sync_once ?? 0) !== 0 || (b.sync_once ?? 0) !== 0,
        noPersist: (header.no_persist ?? 0) !== 0 || (b.no_persist ?? 0) !== 0,
      });
      if (outcome.error === 'idempotency conflict') {
        throw new ApiError(409, 'idempotency_conflict', 'client_msg_no was already used with a different payload');
      }
      if (outcome.error) throw badRequest(outcome.error, outcome.error.replace(/ /g, '_'));
      return { message_id: outcome.messageId, message_seq: outcome.messageSeq, reason: outcome.reason };
    },
  );

  app.post(
    '/channel/messagesync',
    { schema: { body: MessageSyncBody, response: { 200: MessageSyncResult, 400: LegacyError } }, config: { errorShape: 'legacy' } },
    async (request) => {
      const b = request.body;
      const loginUid = b.login_uid.trim();
      if (loginUid === '') throw badRequest('login_uid不能为空！');
      if (b.channel_id.trim() === '') throw badRequest('channel_id不能为空！');
      if (b.channel_type === 0) throw badRequest('channel_type不能为空！');
      try {
        return await deps.sync.pull({
          loginUid,
          channelId: b.channel_id.trim(),
          channelType: b.channel_type,
          startSeq: b.start_message_seq ?? 0,
          endSeq: b.end_message_seq ?? 0,
          limit: b.limit ?? 0,
          pullMode: b.pull_mode ?? 0,
        });
      } catch (err) {
        if (err instanceof SyncRejected) throw badRequest(err.message, 'sync_rejected');
        throw err;
      }
    },
  );
};
