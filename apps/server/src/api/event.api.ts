import {
  MAX_MESSAGE_ID,
  type EventSyncBody,
  type EventSyncResult,
  type MessageEventBody,
  type MessageEventResp,
  type MessageEventResult,
} from '@parley/shared';
import type { MessageEvent } from '@parley/store';
import { invalid } from '../errors.ts';
import type { EventService } from '../messaging/event.service.ts';

/** Most events one `/message/eventsync` answers. */
const MAX_EVENTS = 1000;
/** Events answered when the body names no limit. */
const DEFAULT_EVENTS = 100;

function toResp(e: MessageEvent): MessageEventResp {
  return {
    client_msg_no: e.clientMsgNo,
    event_id: e.eventId,
    event_key: e.eventKey,
    event_type: e.eventType,
    msg_event_seq: e.eventSeq,
    message_id: e.messageId,
    from_uid: e.fromUid,
    visibility: e.visibility,
    occurred_at: e.occurredAt,
    payload: JSON.parse(e.payload) as unknown,
  };
}

/** The message's key every event operation names, checked in WuKongIM's order. */
function checkMessageKey(b: { channel_id: string; channel_type: number; client_msg_no: string }): void {
  if (b.channel_id.trim() === '') throw invalid('channel_id不能为空！');
  if (b.channel_type === 0) throw invalid('channel_type不能为空！');
  if (b.client_msg_no.trim() === '') throw invalid('client_msg_no不能为空！');
}

/** Stream events of messages: append (`/message/event`) and read back (`/message/eventsync`). */
export function createEventApi(events: EventService) {
  return {
    async append(b: MessageEventBody): Promise<MessageEventResult> {
      if (b.headers !== undefined) throw invalid('message event headers are not supported');
      checkMessageKey(b);
      if (b.event_id.trim() === '') throw invalid('event_id不能为空！');
      if (b.event_type.trim() === '') throw invalid('event_type不能为空！');
      const messageId = b.message_id === undefined ? 0n : BigInt(b.message_id);
      // Refused here, not by the store: events of one event-loop turn share a transaction.
      if (messageId > MAX_MESSAGE_ID) throw invalid('message_id exceeds the largest 64-bit message id');
      const r = await events.append({
        channelId: b.channel_id.trim(),
        channelType: b.channel_type,
        fromUid: (b.from_uid ?? '').trim(),
        messageId,
        clientMsgNo: b.client_msg_no.trim(),
        eventId: b.event_id.trim(),
        eventType: b.event_type.trim(),
        eventKey: (b.event_key ?? '').trim(),
        visibility: b.visibility ?? '',
        occurredAt: b.occurred_at ?? 0,
        payload: b.payload,
      });
      return {
        status: 200,
        data: {
          client_msg_no: r.event.clientMsgNo,
          event_key: r.event.eventKey,
          event_id: r.event.eventId,
          msg_event_seq: r.event.eventSeq,
          stream_status: r.status,
          channel_id: b.channel_id.trim(),
          channel_type: b.channel_type,
          from_uid: r.event.fromUid,
        },
      };
    },

    async sync(b: EventSyncBody): Promise<EventSyncResult> {
      checkMessageKey(b);
      const limit = !b.limit || b.limit <= 0 ? DEFAULT_EVENTS : Math.min(b.limit, MAX_EVENTS);
      const found = await events.list(
        (b.login_uid ?? '').trim(),
        b.channel_id.trim(),
        b.channel_type,
        b.client_msg_no.trim(),
        b.from_msg_event_seq ?? 0,
        limit + 1,
      );
      return { events: found.slice(0, limit).map(toResp), more: found.length > limit ? 1 : 0 };
    },
  };
}

export type EventApi = ReturnType<typeof createEventApi>;
