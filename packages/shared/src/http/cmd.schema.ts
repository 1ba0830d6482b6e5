import { Type, type Static } from '@sinclair/typebox';
import { Id, IntFlag, Seq, Uint8 } from './common.schema.ts';
import { MessageResp } from './message.schema.ts';

/** Most uids one cmd bind/unbind batch may carry. */
export const MAX_CMD_BIND_ITEMS = 1000;
/** Largest cmd bind/unbind request body, bytes. */
export const MAX_CMD_BIND_BODY = 256 * 1024;

/** `POST /message/cmd/{bind,unbind}`: one `uid`, or a batch in `uids` or `subscribers`. */
export const CmdBindBody = Type.Object({
  uid: Type.Optional(Id),
  uids: Type.Optional(Type.Array(Id, { maxItems: 100_000 })),
  subscribers: Type.Optional(Type.Array(Id, { maxItems: 100_000 })),
  channel_id: Type.Optional(Id),
  channel_type: Type.Optional(Uint8),
});
export type CmdBindBody = Static<typeof CmdBindBody>;

/** `POST /message/sync`: unacknowledged command messages of a uid. */
export const CmdSyncBody = Type.Object({
  uid: Type.Optional(Id),
  message_seq: Type.Optional(Seq),
  limit: Type.Optional(IntFlag),
});
export type CmdSyncBody = Static<typeof CmdSyncBody>;

/** `POST /message/syncack`: acknowledges what the last sync on this process returned. */
export const CmdSyncAckBody = Type.Object({
  uid: Type.Optional(Id),
  last_message_seq: Type.Optional(Seq),
});
export type CmdSyncAckBody = Static<typeof CmdSyncAckBody>;

/** `POST /message/sync` answer: the commands not yet acknowledged, oldest first. */
export const CmdSyncResult = Type.Array(MessageResp);
