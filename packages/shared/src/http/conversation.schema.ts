import { Type, type Static } from '@sinclair/typebox';
import { Id, Int64, IntFlag, Uint8 } from './common.schema.ts';
import { MessageResp } from './message.schema.ts';

const ChannelRef = Type.Object({ channel_id: Type.String(), channel_type: Type.Integer() });

/** `POST /conversation/list`: one directory page; echo `next_cursor` until `done`. */
export const ConversationListBody = Type.Object({
  uid: Id,
  cursor: Type.Optional(Type.String({ maxLength: 1024 })),
  limit: Type.Optional(IntFlag),
  completed_coverage: Type.Optional(Type.Integer()),
});
export type ConversationListBody = Static<typeof ConversationListBody>;

/** `POST /conversation/retry`: point reads of 1..200 conversations. */
export const ConversationRetryBody = Type.Object({
  uid: Id,
  channels: Type.Array(Type.Object({ channel_id: Id, channel_type: Uint8 }), { maxItems: 200 }),
});
export type ConversationRetryBody = Static<typeof ConversationRetryBody>;

/** `/conversations/{clearUnread,delete,activate}`; `setUnread` adds `unread`. */
export const ConversationMutationBody = Type.Object({
  uid: Type.Optional(Id),
  channel_id: Type.Optional(Id),
  channel_type: Type.Optional(Uint8),
  unread: Type.Optional(IntFlag),
});
export type ConversationMutationBody = Static<typeof ConversationMutationBody>;

/**
 * Newest visible message of a conversation. (Nullable objects, not unions:
 * the serializer picks union branches by validation, which 64-bit ids fail.)
 */
const LastMessage = Type.Object({
  message_id: Int64,
  message_idstr: Type.String(),
  message_seq: Type.Integer(),
  from_uid: Type.String(),
  client_msg_no: Type.String(),
  server_timestamp_ms: Type.Integer(),
  payload: Type.String(),
});

export const ConversationItem = Type.Object({
  channel_id: Type.String(),
  channel_type: Type.Integer(),
  active_at: Int64,
  read_seq: Type.Integer(),
  deleted_to_seq: Type.Integer(),
  unread: Type.Integer(),
  /** Null for an explicitly activated conversation with no visible message. */
  last_message: Type.Unsafe<Static<typeof LastMessage> | null>({ ...LastMessage, nullable: true }),
});
export type ConversationItem = Static<typeof ConversationItem>;

export const ConversationPage = Type.Object({
  conversations: Type.Array(ConversationItem),
  deletes: Type.Array(ChannelRef),
  unresolved: Type.Array(ChannelRef),
  next_cursor: Type.Optional(Type.String()),
  done: Type.Boolean(),
  coverage: Int64,
  tombstones_retained_since: Int64,
  reset_required: Type.Boolean(),
});
export type ConversationPage = Static<typeof ConversationPage>;

/** `POST /conversation/sync` (deprecated): the v2-style list. */
export const ConversationSyncBody = Type.Object({
  uid: Id,
  version: Type.Optional(Type.Integer()),
  last_msg_seqs: Type.Optional(Type.String({ maxLength: 65536 })),
  msg_count: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
  only_unread: Type.Optional(IntFlag),
  exclude_channel_types: Type.Optional(Type.Array(Uint8, { maxItems: 256 })),
  limit: Type.Optional(Type.Integer({ minimum: 0, maximum: 500 })),
});
export type ConversationSyncBody = Static<typeof ConversationSyncBody>;

export const ConversationSyncItem = Type.Object({
  channel_id: Type.String(),
  channel_type: Type.Integer(),
  unread: Type.Integer(),
  timestamp: Type.Integer(),
  last_msg_seq: Type.Integer(),
  last_client_msg_no: Type.String(),
  offset_msg_seq: Type.Integer(),
  readed_to_msg_seq: Type.Integer(),
  version: Type.Integer(),
  recents: Type.Optional(Type.Array(MessageResp)),
});
export type ConversationSyncItem = Static<typeof ConversationSyncItem>;

/** `POST /conversation/sync` answer: the v2-style list. */
export const ConversationSyncResult = Type.Array(ConversationSyncItem);
export type ConversationSyncResult = Static<typeof ConversationSyncResult>;
