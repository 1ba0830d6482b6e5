import { Type, type Static } from '@sinclair/typebox';
import { Id, Int64, IntFlag, Seq, StatusOk, Uint8, UidList } from './common.schema.ts';
import { MessageResp, MessageSyncBody, MessageSyncResult, SendHeader } from './message.schema.ts';

/** A JSON array of uids (`/route/batch`, `/user/onlinestatus`). */
export const UidArrayBody = UidList;

/** `{"uids": [...]}` (system uid routes). */
export const UidsBody = Type.Object({ uids: Type.Optional(UidList) });
export type UidsBody = Static<typeof UidsBody>;

/** One online route: a session of `uid` on this node. */
export const OnlineStatus = Type.Object({ uid: Type.String(), device_flag: Type.Integer(), online: Type.Integer() });
export type OnlineStatus = Static<typeof OnlineStatus>;

/** `POST /user/onlinestatus` answer: `{"status":200}` for an empty list, else every online route of the uids. */
export const OnlineStatusResult = Type.Union([StatusOk, Type.Array(OnlineStatus)]);
export type OnlineStatusResult = Static<typeof OnlineStatusResult>;

/** `GET /user/systemuids` answer. */
export const SystemUidsResult = Type.Array(Type.String());

/** `GET /channel/whitelist` answer: one entry per allowed uid (`id` is always 0). */
export const WhitelistEntry = Type.Object({ id: Type.Integer(), uid: Type.String() });
export type WhitelistEntry = Static<typeof WhitelistEntry>;
export const WhitelistResult = Type.Array(WhitelistEntry);

/** `/channel/delete`, `/channel/subscriber_remove_all`, `*_remove_all`. */
export const ChannelKeyBody = Type.Object({ channel_id: Id, channel_type: Type.Optional(Uint8) });
export type ChannelKeyBody = Static<typeof ChannelKeyBody>;

/** `/tmpchannel/subscriber_set`. */
export const TmpSubscriberBody = Type.Object({ channel_id: Id, uids: Type.Optional(UidList) });
export type TmpSubscriberBody = Static<typeof TmpSubscriberBody>;

/** `GET /channel/whitelist`, `/channel/max_message_seq`, `/channel/last_message` queries. */
export const ChannelQuery = Type.Object({
  channel_id: Type.Optional(Type.String({ maxLength: 256 })),
  channel_type: Type.Optional(Type.String({ maxLength: 8 })),
  login_uid: Type.Optional(Type.String({ maxLength: 256 })),
});
export type ChannelQuery = Static<typeof ChannelQuery>;

/** `POST /channel/messagesyncbatch`: 1..200 pulls for one user. */
export const MessageSyncBatchBody = Type.Object({
  login_uid: Id,
  items: Type.Array(Type.Omit(MessageSyncBody, ['login_uid']), { maxItems: 1000 }),
});
export type MessageSyncBatchBody = Static<typeof MessageSyncBatchBody>;

/** One item of the batch answer: its channel, its page, and `error` when reading it failed. */
export const MessageSyncBatchItem = Type.Intersect([
  MessageSyncResult,
  Type.Object({ channel_id: Type.String(), channel_type: Type.Integer(), error: Type.Optional(Type.String()) }),
]);
export type MessageSyncBatchItem = Static<typeof MessageSyncBatchItem>;
export const MessageSyncBatchResult = Type.Object({ items: Type.Array(MessageSyncBatchItem) });
export type MessageSyncBatchResult = Static<typeof MessageSyncBatchResult>;

/** `GET /channel/max_message_seq` answer. */
export const MaxMessageSeqResult = Type.Object({ message_seq: Type.Integer() });
export type MaxMessageSeqResult = Static<typeof MaxMessageSeqResult>;

/** `GET /channel/last_message` answer: the newest visible message, or `{}`. */
export const LastMessageResult = Type.Partial(MessageResp);
export type LastMessageResult = Static<typeof LastMessageResult>;

/** `POST /messages`: exact query by ids, seqs and client message numbers (≤ 128 selectors). */
export const ExactQueryBody = Type.Object({
  login_uid: Id,
  channel_id: Id,
  channel_type: Uint8,
  message_ids: Type.Optional(
    Type.Array(Type.Union([Type.Integer({ minimum: 0 }), Type.String({ pattern: '^[0-9]{1,20}$' })]), { maxItems: 1000 }),
  ),
  message_seqs: Type.Optional(Type.Array(Seq, { maxItems: 1000 })),
  client_msg_nos: Type.Optional(Type.Array(Type.String({ maxLength: 128 }), { maxItems: 1000 })),
});
export type ExactQueryBody = Static<typeof ExactQueryBody>;

/** `POST /message/sendbatch` (v2): one person message from `from_uid` to each subscriber. */
export const SendBatchBody = Type.Object({
  header: Type.Optional(SendHeader),
  from_uid: Id,
  subscribers: UidList,
  payload: Type.String(),
  client_msg_no: Type.Optional(Type.String({ maxLength: 128 })),
});
export type SendBatchBody = Static<typeof SendBatchBody>;

export const SendBatchResult = Type.Object({ fail_uids: Type.Array(Type.String()), reason: Type.Array(Type.Integer()) });
export type SendBatchResult = Static<typeof SendBatchResult>;

/** `POST /conn/kick` and `/conn/remove` (v2): one connection of a uid on this node. */
export const ConnBody = Type.Object({
  uid: Id,
  conn_id: Type.Integer({ minimum: 0 }),
  node_id: Type.Optional(Type.Integer({ minimum: 0 })),
});
export type ConnBody = Static<typeof ConnBody>;

/** `POST /message/event`: a stream event of a message. `headers` must be absent. */
export const MessageEventBody = Type.Object({
  channel_id: Id,
  channel_type: Uint8,
  from_uid: Type.Optional(Id),
  message_id: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.String({ pattern: '^[0-9]{1,20}$' })])),
  client_msg_no: Type.String({ maxLength: 128 }),
  event_id: Type.String({ maxLength: 128 }),
  event_type: Type.String({ maxLength: 64 }),
  event_key: Type.Optional(Type.String({ maxLength: 64 })),
  visibility: Type.Optional(Type.String({ maxLength: 64 })),
  occurred_at: Type.Optional(Type.Integer()),
  payload: Type.Optional(Type.Unknown()),
  headers: Type.Optional(Type.Unknown()),
});
export type MessageEventBody = Static<typeof MessageEventBody>;

/** `POST /message/eventsync` (v2): events of one message after a seq. */
export const EventSyncBody = Type.Object({
  login_uid: Type.Optional(Id),
  channel_id: Id,
  channel_type: Uint8,
  client_msg_no: Type.String({ maxLength: 128 }),
  from_msg_event_seq: Type.Optional(Seq),
  limit: Type.Optional(IntFlag),
});
export type EventSyncBody = Static<typeof EventSyncBody>;

export const MessageEventResp = Type.Object({
  client_msg_no: Type.String(),
  event_id: Type.String(),
  event_key: Type.String(),
  event_type: Type.String(),
  msg_event_seq: Type.Integer(),
  message_id: Int64,
  from_uid: Type.String(),
  visibility: Type.String(),
  occurred_at: Type.Integer(),
  payload: Type.Unknown(),
});
export type MessageEventResp = Static<typeof MessageEventResp>;

/** `POST /message/event` answer: the stored event (the earlier one on a repeat) and its stream's state. */
export const MessageEventResult = Type.Object({
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
});
export type MessageEventResult = Static<typeof MessageEventResult>;

/** `POST /message/eventsync` answer: events oldest first; `more` 1 when further events follow. */
export const EventSyncResult = Type.Object({ events: Type.Array(MessageEventResp), more: Type.Integer() });
export type EventSyncResult = Static<typeof EventSyncResult>;

/** `POST /messages` answer: the page shape of a pull (its seqs and `more` always 0). */
export const ExactQueryResult = MessageSyncResult;
export type ExactQueryResult = MessageSyncResult;
