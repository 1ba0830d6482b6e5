import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ChannelType, ErrorBody, MessageSendBody, MessageSendResult, ReasonCode, SendBatchBody, SendBatchResult } from '@parley/shared';
import { ApiError, badRequest } from './errors.ts';
import type { HttpDeps } from './deps.ts';

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Backend sends: `/message/send` and the v2 `/message/sendbatch`. */
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
        ...(b.subscribers && b.subscribers.length > 0 ? { subscribers: b.subscribers } : {}),
      });
      if (outcome.error === 'idempotency conflict') {
        throw new ApiError(409, 'idempotency_conflict', 'client_msg_no was already used with a different payload');
      }
      if (outcome.error) throw badRequest(outcome.error, outcome.error.replace(/ /g, '_'));
      return { message_id: outcome.messageId, message_seq: outcome.messageSeq, reason: outcome.reason };
    },
  );

  app.post(
    '/message/sendbatch',
    {
      schema: { body: SendBatchBody, response: { 200: SendBatchResult, '4xx': ErrorBody } },
      config: { errorShape: 'error', bindMessage: 'invalid request' },
    },
    async (request) => {
      const b = request.body;
      const fromUid = b.from_uid.trim();
      if (fromUid === '' || b.payload === '' || b.subscribers.length === 0) throw badRequest('invalid request');
      if (!BASE64.test(b.payload)) throw badRequest('invalid payload', 'invalid_payload');
      const payload = Buffer.from(b.payload, 'base64');
      const header = b.header ?? {};
      const failUids: string[] = [];
      const reasons: number[] = [];
      for (const uid of new Set(b.subscribers.map((u) => u.trim()).filter((u) => u !== ''))) {
        const outcome = await deps.send.send({
          fromUid,
          deviceId: '',
          channelId: uid,
          channelType: ChannelType.Person,
          payload,
          clientMsgNo: b.client_msg_no ? `${b.client_msg_no}:${uid}` : '',
          setting: 0,
          topic: '',
          expire: 0,
          redDot: (header.red_dot ?? 0) !== 0,
          syncOnce: (header.sync_once ?? 0) !== 0,
          noPersist: (header.no_persist ?? 0) !== 0,
        });
        if (outcome.reason !== ReasonCode.Success) {
          failUids.push(uid);
          reasons.push(outcome.reason);
        }
      }
      return { fail_uids: failUids, reason: reasons };
    },
  );
};
