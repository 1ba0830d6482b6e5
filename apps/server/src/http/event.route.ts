import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { EventSyncBody, LegacyError, MessageEventBody, MessageEventResp } from '@parley/shared';
import { Type } from '@sinclair/typebox';
import { EventRejected } from '../messaging/event.service.ts';
import type { MessageEvent } from '@parley/store';
import type { HttpDeps } from './deps.ts';
import { badRequest } from './errors.ts';

const config = { errorShape: 'legacy' as const };
const MAX_EVENTS = 1000;

function toResp(e: MessageEvent) {
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

async function guard<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof EventRejected) throw badRequest(err.message, 'event_rejected');
    throw err;
  }
}

/** Stream events of messages: append (`/message/event`) and read back (`/message/eventsync`). */
export const eventRoutes: FastifyPluginAsyncTypebox<{ deps: HttpDeps }> = async (app, { deps }) => {
  app.post(
    '/message/event',
    {
      schema: {
        body: MessageEventBody,
        response: {
          200: Type.Object({
            status: Type.Literal(200),
            data: Type.Object({
              client_msg_no: Type.String(),
              event_key: Type.String(),
              event_id: Type.String(),
              msg_event_seq: Type.Integer(),
              stream_status: Type.String(),
              channel_id: Type.String(),
              channel_type: Type.Integer(),
              from_uid: Type.String(),
            }),
          }),
          400: LegacyError,
        },
      },
      config,
    },
    async (request) => {
      const b = request.body;
      if (b.headers !== undefined) throw badRequest('message event headers are not supported');
      if (b.channel_id.trim() === '') throw badRequest('channel_id不能为空！');
      if (b.channel_type === 0) throw badRequest('channel_type不能为空！');
      if (b.client_msg_no.trim() === '') throw badRequest('client_msg_no不能为空！');
      if (b.event_id.trim() === '') throw badRequest('event_id不能为空！');
      if (b.event_type.trim() === '') throw badRequest('event_type不能为空！');
      const r = await guard(() =>
        deps.events.append({
          channelId: b.channel_id.trim(),
          channelType: b.channel_type,
          fromUid: (b.from_uid ?? '').trim(),
          messageId: b.message_id === undefined ? 0n : BigInt(b.message_id),
          clientMsgNo: b.client_msg_no.trim(),
          eventId: b.event_id.trim(),
          eventType: b.event_type.trim(),
          eventKey: (b.event_key ?? '').trim(),
          visibility: b.visibility ?? '',
          occurredAt: b.occurred_at ?? 0,
          payload: b.payload,
        }),
      );
      return {
        status: 200 as const,
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
  );

  app.post(
    '/message/eventsync',
    {
      schema: {
        body: EventSyncBody,
        response: { 200: Type.Object({ events: Type.Array(MessageEventResp), more: Type.Integer() }), 400: LegacyError },
      },
      config,
    },
    async (request) => {
      const b = request.body;
      if (b.channel_id.trim() === '') throw badRequest('channel_id不能为空！');
      if (b.channel_type === 0) throw badRequest('channel_type不能为空！');
      if (b.client_msg_no.trim() === '') throw badRequest('client_msg_no不能为空！');
      const limit = !b.limit || b.limit <= 0 ? 100 : Math.min(b.limit, MAX_EVENTS);
      const events = await guard(() =>
        deps.events.list(
          (b.login_uid ?? '').trim(),
          b.channel_id.trim(),
          b.channel_type,
          b.client_msg_no.trim(),
          b.from_msg_event_seq ?? 0,
          limit + 1,
        ),
      );
      return { events: events.slice(0, limit).map(toResp), more: events.length > limit ? 1 : 0 };
    },
  );
};
