import type { ArchivedRecord, ConversationRecord, MemberRecord } from '../v2/records.ts';
import type { RawMessage } from '../v2/scan-shard.ts';

/** Characters `JSON.stringify` escapes in a string (surrogates: only lone ones, so every surrogate takes the slow path). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** `JSON.stringify(s)`: a plain string (nearly every id) is quoted without the escaping pass. */
export function jsonString(s: string): string {
  return NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : `"${s}"`;
}

/**
 * A message line is the JSON of its `MessageRecord` (field order as declared
 * there). It is written in two parts: the head names the row's place and the
 * v3 channel (known only once the channel is checked), the tail holds the
 * row's columns (from `v2_channel_id` on, with the newline) and depends on
 * the row alone, so it can be encoded wherever the row is decoded.
 */
export function messageHead(nodeId: number, shard: number, channelId: string): string {
  return `{"node_id":${nodeId},"shard":${shard},"channel_id":${jsonString(channelId)}`;
}

/** See `messageHead`. The payload is already Base64, which needs no escaping. */
export function messageTail(m: RawMessage): string {
  return (
    `,"v2_channel_id":${jsonString(m.channel_id)},"channel_type":${m.channel_type},"message_seq":${m.seq},` +
    `"message_id":${jsonString(m.message_id)},"client_msg_no":${jsonString(m.client_msg_no)},"from_uid":${jsonString(m.from_uid)},` +
    `"header":${m.header},"setting":${m.setting},"expire":${m.expire},"timestamp":${m.timestamp},"topic":${jsonString(m.topic)},` +
    `"stream_no":${jsonString(m.stream_no)},"term":${jsonString(m.term)},"payload":"${m.payload}"}\n`
  );
}

/** `JSON.stringify(rec)` of a conversation record (field order as declared in `ConversationRecord`). */
export function conversationJson(r: ConversationRecord): string {
  return (
    `{"node_id":${r.node_id},"shard":${r.shard},"v2_id":${jsonString(r.v2_id)},"uid":${jsonString(r.uid)},"type":${r.type},` +
    `"channel_id":${jsonString(r.channel_id)},"v2_channel_id":${jsonString(r.v2_channel_id)},"channel_type":${r.channel_type},` +
    `"unread_count":${r.unread_count},"readed_to_msg_seq":${r.readed_to_msg_seq},"deleted_at_msg_seq":${r.deleted_at_msg_seq},` +
    `"created_at_ns":${jsonString(r.created_at_ns)},"updated_at_ns":${jsonString(r.updated_at_ns)}}`
  );
}

/** `JSON.stringify(rec)` of a member record (field order as declared in `MemberRecord`). */
export function memberJson(r: MemberRecord): string {
  return (
    `{"node_id":${r.node_id},"shard":${r.shard},"list":${jsonString(r.list)},"channel_id":${jsonString(r.channel_id)},` +
    `"channel_type":${r.channel_type},"uid":${jsonString(r.uid)},"created_at_ns":${jsonString(r.created_at_ns)},` +
    `"updated_at_ns":${jsonString(r.updated_at_ns)}}`
  );
}

/** `JSON.stringify(rec)` of an archived record (field order as the collector builds it: kind, node_id, shard, key, value; both Base64). */
export function archivedJson(r: ArchivedRecord): string {
  return `{"kind":${jsonString(r.kind)},"node_id":${r.node_id},"shard":${r.shard},"key":"${r.key}","value":"${r.value}"}`;
}
