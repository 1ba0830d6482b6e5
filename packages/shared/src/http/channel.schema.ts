import { Type, type Static } from '@sinclair/typebox';
import { Id, IntFlag, Uint8, UidList } from './common.schema.ts';

/** `POST /channel`: create or update a channel, optionally adding subscribers. */
export const ChannelBody = Type.Object({
  channel_id: Id,
  channel_type: Uint8,
  large: Type.Optional(IntFlag),
  ban: Type.Optional(IntFlag),
  disband: Type.Optional(IntFlag),
  send_ban: Type.Optional(IntFlag),
  allow_stranger: Type.Optional(IntFlag),
  reset: Type.Optional(IntFlag),
  subscribers: Type.Optional(UidList),
});
export type ChannelBody = Static<typeof ChannelBody>;

/**
 * `POST /channel/info` (deprecated): the info flags only, and no validation at
 * all beyond JSON types and size bounds. A missing id or type binds as `""` / 0
 * like Go's zero values, and the metadata row is upserted as given.
 */
export const ChannelInfoBody = Type.Object({
  channel_id: Type.Optional(Id),
  channel_type: Type.Optional(Uint8),
  large: Type.Optional(IntFlag),
  ban: Type.Optional(IntFlag),
  disband: Type.Optional(IntFlag),
  send_ban: Type.Optional(IntFlag),
  allow_stranger: Type.Optional(IntFlag),
});
export type ChannelInfoBody = Static<typeof ChannelInfoBody>;

/** `POST /channel/subscriber_add` and `/channel/subscriber_remove`. */
export const SubscriberBody = Type.Object({
  channel_id: Id,
  channel_type: Type.Optional(Uint8),
  subscribers: UidList,
  reset: Type.Optional(IntFlag),
  temp_subscriber: Type.Optional(IntFlag),
});
export type SubscriberBody = Static<typeof SubscriberBody>;

/** `POST /channel/{blacklist,whitelist}_{add,set,remove}`. */
export const MemberListBody = Type.Object({
  channel_id: Id,
  channel_type: Type.Optional(Uint8),
  uids: Type.Optional(UidList),
});
export type MemberListBody = Static<typeof MemberListBody>;
