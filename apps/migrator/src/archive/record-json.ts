import type { ArchivedRecord, ConversationRecord, MemberRecord } from '../v2/records.ts';
import type { RawMessage } from '../v2/scan-shard.ts';
import { putAscii, putNumber, putString, stringBound, type ByteOut } from './json-bytes.ts';

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

/** An upper bound of the bytes `writeMessageTail` writes for `m` (and of the room it asks for on the way). */
export function messageTailBound(m: RawMessage): number {
  // 180 bytes of keys and punctuation, six numbers of at most 24
  return (
    400 + stringBound(m.channel_id) + stringBound(m.message_id) + stringBound(m.client_msg_no) + stringBound(m.from_uid) +
    stringBound(m.topic) + stringBound(m.stream_no) + stringBound(m.term) + m.payload.length
  );
}

/** Writes the tail of `m`'s line (see `messageHead`) as UTF-8 bytes. The payload is already Base64, which needs no escaping. */
export function writeMessageTail(o: ByteOut, m: RawMessage): void {
  putAscii(o, ',"v2_channel_id":');
  putString(o, m.channel_id);
  putAscii(o, ',"channel_type":');
  putNumber(o, m.channel_type);
  putAscii(o, ',"message_seq":');
  putNumber(o, m.seq);
  putAscii(o, ',"message_id":');
  putString(o, m.message_id);
  putAscii(o, ',"client_msg_no":');
  putString(o, m.client_msg_no);
  putAscii(o, ',"from_uid":');
  putString(o, m.from_uid);
  putAscii(o, ',"header":');
  putNumber(o, m.header);
  putAscii(o, ',"setting":');
  putNumber(o, m.setting);
  putAscii(o, ',"expire":');
  putNumber(o, m.expire);
  putAscii(o, ',"timestamp":');
  putNumber(o, m.timestamp);
  putAscii(o, ',"topic":');
  putString(o, m.topic);
  putAscii(o, ',"stream_no":');
  putString(o, m.stream_no);
  putAscii(o, ',"term":');
  putString(o, m.term);
  putAscii(o, ',"payload":"');
  putAscii(o, m.payload);
  putAscii(o, '"}\n');
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
