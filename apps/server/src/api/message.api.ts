import { Buffer } from 'node:buffer';
import {
  ChannelType,
  ReasonCode,
  type MessageSendBody,
  type MessageSendResult,
  type SendBatchBody,
  type SendBatchResult,
} from '@parley/shared';
import { invalid, refusal } from '../errors.ts';
import type { SendService } from '../messaging/send.service.ts';

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Backend sends: `/message/send` and the v2 `/message/sendbatch`, decoded into send commands. */
export function createMessageApi(send: SendService) {
  return {
    /** One message; a request-shape problem of the send is an error (409 for a reused `client_msg_no`), a refusal a reason. */
    async send(b: MessageSendBody): Promise<MessageSendResult> {
      const fromUid = (b.from_uid || b.sender_uid || '').trim();
      if (fromUid === '' || b.payload === '') throw invalid('invalid request');
      if (!BASE64.test(b.payload)) throw invalid('invalid payload', 'invalid_payload');
      const header = b.header ?? {};
      const outcome = await send.send({
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
      if (outcome.refusal) throw refusal(outcome.refusal);
      return { message_id: outcome.messageId, message_seq: outcome.messageSeq, reason: outcome.reason };
    },

    /** One person message to each distinct subscriber; the ones refused are listed with their reasons. */
    async sendBatch(b: SendBatchBody): Promise<SendBatchResult> {
      const fromUid = b.from_uid.trim();
      if (fromUid === '' || b.payload === '' || b.subscribers.length === 0) throw invalid('invalid request');
      if (!BASE64.test(b.payload)) throw invalid('invalid payload', 'invalid_payload');
      const payload = Buffer.from(b.payload, 'base64');
      const header = b.header ?? {};
      const failUids: string[] = [];
      const reasons: number[] = [];
      for (const uid of new Set(b.subscribers.map((u) => u.trim()).filter((u) => u !== ''))) {
        const outcome = await send.send({
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
  };
}

export type MessageApi = ReturnType<typeof createMessageApi>;
