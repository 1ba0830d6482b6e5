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

/** Writes `JSON.stringify(r)` of a conversation record (field order as declared in `ConversationRecord`) and a newline. */
export function writeConversationLine(o: ByteOut, r: ConversationRecord): void {
  putAscii(o, '{"node_id":');
  putNumber(o, r.node_id);
  putAscii(o, ',"shard":');
  putNumber(o, r.shard);
  putAscii(o, ',"v2_id":');
  putString(o, r.v2_id);
  putAscii(o, ',"uid":');
  putString(o, r.uid);
  putAscii(o, ',"type":');
  putNumber(o, r.type);
  putAscii(o, ',"channel_id":');
  putString(o, r.channel_id);
  putAscii(o, ',"v2_channel_id":');
  putString(o, r.v2_channel_id);
  putAscii(o, ',"channel_type":');
  putNumber(o, r.channel_type);
  putAscii(o, ',"unread_count":');
  putNumber(o, r.unread_count);
  putAscii(o, ',"readed_to_msg_seq":');
  putNumber(o, r.readed_to_msg_seq);
  putAscii(o, ',"deleted_at_msg_seq":');
  putNumber(o, r.deleted_at_msg_seq);
  putAscii(o, ',"created_at_ns":');
  putString(o, r.created_at_ns);
  putAscii(o, ',"updated_at_ns":');
  putString(o, r.updated_at_ns);
  putAscii(o, '}\n');
}

/** Writes `JSON.stringify(r)` of a member record (field order as declared in `MemberRecord`) and a newline. */
export function writeMemberLine(o: ByteOut, r: MemberRecord): void {
  putAscii(o, '{"node_id":');
  putNumber(o, r.node_id);
  putAscii(o, ',"shard":');
  putNumber(o, r.shard);
  putAscii(o, ',"list":');
  putString(o, r.list);
  putAscii(o, ',"channel_id":');
  putString(o, r.channel_id);
  putAscii(o, ',"channel_type":');
  putNumber(o, r.channel_type);
  putAscii(o, ',"uid":');
  putString(o, r.uid);
  putAscii(o, ',"created_at_ns":');
  putString(o, r.created_at_ns);
  putAscii(o, ',"updated_at_ns":');
  putString(o, r.updated_at_ns);
  putAscii(o, '}\n');
}

/** Writes `JSON.stringify(r)` of an archived record (field order as the collector builds it: kind, node_id, shard, key, value; both Base64) and a newline. */
export function writeArchivedLine(o: ByteOut, r: ArchivedRecord): void {
  putAscii(o, '{"kind":');
  putString(o, r.kind);
  putAscii(o, ',"node_id":');
  putNumber(o, r.node_id);
  putAscii(o, ',"shard":');
  putNumber(o, r.shard);
  putAscii(o, ',"key":"');
  putAscii(o, r.key);
  putAscii(o, '","value":"');
  putAscii(o, r.value);
  putAscii(o, '"}\n');
}
