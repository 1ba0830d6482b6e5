import { Type, type Static } from '@sinclair/typebox';
import { Id, Int64, IntFlag, Seq, Uint32, Uint8, UidList } from './common.schema.ts';

/** Header flags of an HTTP send (`1` = on). */
export const SendHeader = Type.Object({
  no_persist: Type.Optional(IntFlag),
  red_dot: Type.Optional(IntFlag),
  sync_once: Type.Optional(IntFlag),
});

/** `POST /message/send`: a backend send. `payload` is standard Base64 of the raw bytes. */
export const MessageSendBody = Type.Object({
  header: Type.Optional(SendHeader),
  from_uid: Type.Optional(Id),
  sender_uid: Type.Optional(Id),
  device_id: Type.Optional(Id),
  channel_id: Type.Optional(Id),
  channel_type: Type.Optional(Uint8),
  payload: Type.String(),
  client_msg_no: Type.Optional(Type.String({ maxLength: 128 })),
  stream_no: Type.Optional(Type.String({ maxLength: 128 })),
  setting: Type.Optional(Uint8),
  topic: Type.Optional(Type.String({ maxLength: 256 })),
  expire: Type.Optional(Uint32),
  subscribers: Type.Optional(UidList),
  no_persist: Type.Optional(IntFlag),
  sync_once: Type.Optional(IntFlag),
  red_dot: Type.Optional(IntFlag),
});
export type MessageSendBody = Static<typeof MessageSendBody>;

/**
 * Result of `/message/send`. A 200 is not success: `reason` must be 1.
 * `message_id` is a 64-bit integer written exactly (a `bigint` in TypeScript).
 */
export const MessageSendResult = Type.Object({
  message_id: Int64,
  message_seq: Type.Integer(),
  reason: Type.Integer(),
});
export type MessageSendResult = Static<typeof MessageSendResult>;

/** `POST /channel/messagesync`: one page of a channel's messages. */
export const MessageSyncBody = Type.Object({
  login_uid: Id,
  channel_id: Id,
  channel_type: Uint8,
  start_message_seq: Type.Optional(Seq),
  end_message_seq: Type.Optional(Seq),
  limit: Type.Optional(IntFlag),
  pull_mode: Type.Optional(Uint8),
  include_event_meta: Type.Optional(IntFlag),
  event_summary_mode: Type.Optional(Type.String({ maxLength: 32 })),
  stream_v2: Type.Optional(IntFlag),
});
export type MessageSyncBody = Static<typeof MessageSyncBody>;

/** A stored message as the HTTP API returns it. Binary fields are Base64. */
export const MessageResp = Type.Object({
  header: Type.Object({ no_persist: Type.Integer(), red_dot: Type.Integer(), sync_once: Type.Integer() }),
  setting: Type.Integer(),
  message_id: Int64,
  message_idstr: Type.String(),
  client_msg_no: Type.String(),
  message_seq: Type.Integer(),
  from_uid: Type.String(),
  channel_id: Type.String(),
  channel_type: Type.Integer(),
  topic: Type.Optional(Type.String()),
  expire: Type.Integer(),
  timestamp: Type.Integer(),
  payload: Type.String(),
  /** Stream messages, when event meta is requested: 1 once the main lane has ended. */
  end: Type.Optional(Type.Integer()),
  /** 0 closed, 1 error, 2 cancelled. */
  end_reason: Type.Optional(Type.Integer()),
  error: Type.Optional(Type.String()),
  /** Base64 of the main lane's accumulated text. */
  stream_data: Type.Optional(Type.String()),
  event_meta: Type.Optional(
    Type.Object({
      has_events: Type.Boolean(),
      completed: Type.Boolean(),
      event_version: Type.Integer(),
      last_msg_event_seq: Type.Integer(),
      event_count: Type.Integer(),
      open_event_count: Type.Integer(),
      events: Type.Array(
        Type.Object({
          event_key: Type.String(),
          status: Type.String(),
          last_msg_event_seq: Type.Integer(),
          snapshot: Type.Optional(Type.Unknown()),
          end_reason: Type.Integer(),
          error: Type.Optional(Type.String()),
        }),
      ),
    }),
  ),
  event_sync_hint: Type.Optional(Type.Object({ client_msg_no: Type.String(), from_msg_event_seq: Type.Integer() })),
});
export type MessageResp = Static<typeof MessageResp>;

export const MessageSyncResult = Type.Object({
  start_message_seq: Type.Integer(),
  end_message_seq: Type.Integer(),
  more: Type.Integer(),
  messages: Type.Array(MessageResp),
});
export type MessageSyncResult = Static<typeof MessageSyncResult>;
