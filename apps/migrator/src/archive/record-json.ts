import type { ArchivedRecord, ConversationRecord, MemberRecord } from '../v2/records.ts';
import type { RawMessage } from '../v2/scan-shard.ts';
import { NUMBER_BOUND, putAscii, putNumber, putString, stringBound, type ByteOut } from './json-bytes.ts';

/** Characters `JSON.stringify` escapes in a string (surrogates: only lone ones, so every surrogate takes the slow path). */
// eslint-disable-next-line no-control-regex -- control characters are exactly what must be found
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
  // 180 bytes of keys and punctuation, six numbers
  return (
    200 +
    6 * NUMBER_BOUND +
    stringBound(m.channel_id) +
    stringBound(m.message_id) +
    stringBound(m.client_msg_no) +
    stringBound(m.from_uid) +
    stringBound(m.topic) +
    stringBound(m.stream_no) +
    stringBound(m.term) +
    m.payload.length
  );
}

/** Writes the tail of `m`'s line (see `messageHead`) as UTF-8 bytes. The payload is already Base64, which needs no escaping. */
export function writeMessageTail(o: ByteOut, m: RawMessage): void {
  o.reserve(messageTailBound(m));
  const b = o.buf;
  let u = o.used;
  u = putAscii(b, u, ',"v2_channel_id":');
  u = putString(b, u, m.channel_id);
  u = putAscii(b, u, ',"channel_type":');
  u = putNumber(b, u, m.channel_type);
  u = putAscii(b, u, ',"message_seq":');
  u = putNumber(b, u, m.seq);
  u = putAscii(b, u, ',"message_id":');
  u = putString(b, u, m.message_id);
  u = putAscii(b, u, ',"client_msg_no":');
  u = putString(b, u, m.client_msg_no);
  u = putAscii(b, u, ',"from_uid":');
  u = putString(b, u, m.from_uid);
  u = putAscii(b, u, ',"header":');
  u = putNumber(b, u, m.header);
  u = putAscii(b, u, ',"setting":');
  u = putNumber(b, u, m.setting);
  u = putAscii(b, u, ',"expire":');
  u = putNumber(b, u, m.expire);
  u = putAscii(b, u, ',"timestamp":');
  u = putNumber(b, u, m.timestamp);
  u = putAscii(b, u, ',"topic":');
  u = putString(b, u, m.topic);
  u = putAscii(b, u, ',"stream_no":');
  u = putString(b, u, m.stream_no);
  u = putAscii(b, u, ',"term":');
  u = putString(b, u, m.term);
  u = putAscii(b, u, ',"payload":"');
  u = putAscii(b, u, m.payload);
  u = putAscii(b, u, '"}\n');
  o.used = u;
}

/** Writes `JSON.stringify(r)` of a conversation record (field order as declared in `ConversationRecord`) and a newline. */
export function writeConversationLine(o: ByteOut, r: ConversationRecord): void {
  o.reserve(
    400 +
      8 * NUMBER_BOUND +
      stringBound(r.v2_id) +
      stringBound(r.uid) +
      stringBound(r.channel_id) +
      stringBound(r.v2_channel_id) +
      stringBound(r.created_at_ns) +
      stringBound(r.updated_at_ns),
  );
  const b = o.buf;
  let u = o.used;
  u = putAscii(b, u, '{"node_id":');
  u = putNumber(b, u, r.node_id);
  u = putAscii(b, u, ',"shard":');
  u = putNumber(b, u, r.shard);
  u = putAscii(b, u, ',"v2_id":');
  u = putString(b, u, r.v2_id);
  u = putAscii(b, u, ',"uid":');
  u = putString(b, u, r.uid);
  u = putAscii(b, u, ',"type":');
  u = putNumber(b, u, r.type);
  u = putAscii(b, u, ',"channel_id":');
  u = putString(b, u, r.channel_id);
  u = putAscii(b, u, ',"v2_channel_id":');
  u = putString(b, u, r.v2_channel_id);
  u = putAscii(b, u, ',"channel_type":');
  u = putNumber(b, u, r.channel_type);
  u = putAscii(b, u, ',"unread_count":');
  u = putNumber(b, u, r.unread_count);
  u = putAscii(b, u, ',"readed_to_msg_seq":');
  u = putNumber(b, u, r.readed_to_msg_seq);
  u = putAscii(b, u, ',"deleted_at_msg_seq":');
  u = putNumber(b, u, r.deleted_at_msg_seq);
  u = putAscii(b, u, ',"created_at_ns":');
  u = putString(b, u, r.created_at_ns);
  u = putAscii(b, u, ',"updated_at_ns":');
  u = putString(b, u, r.updated_at_ns);
  u = putAscii(b, u, '}\n');
  o.used = u;
}

/** Writes `JSON.stringify(r)` of a member record (field order as declared in `MemberRecord`) and a newline. */
export function writeMemberLine(o: ByteOut, r: MemberRecord): void {
  o.reserve(
    200 +
      3 * NUMBER_BOUND +
      stringBound(r.list) +
      stringBound(r.channel_id) +
      stringBound(r.uid) +
      stringBound(r.created_at_ns) +
      stringBound(r.updated_at_ns),
  );
  const b = o.buf;
  let u = o.used;
  u = putAscii(b, u, '{"node_id":');
  u = putNumber(b, u, r.node_id);
  u = putAscii(b, u, ',"shard":');
  u = putNumber(b, u, r.shard);
  u = putAscii(b, u, ',"list":');
  u = putString(b, u, r.list);
  u = putAscii(b, u, ',"channel_id":');
  u = putString(b, u, r.channel_id);
  u = putAscii(b, u, ',"channel_type":');
  u = putNumber(b, u, r.channel_type);
  u = putAscii(b, u, ',"uid":');
  u = putString(b, u, r.uid);
  u = putAscii(b, u, ',"created_at_ns":');
  u = putString(b, u, r.created_at_ns);
  u = putAscii(b, u, ',"updated_at_ns":');
  u = putString(b, u, r.updated_at_ns);
  u = putAscii(b, u, '}\n');
  o.used = u;
}

/** Writes `JSON.stringify(r)` of an archived record (field order as the collector builds it: kind, node_id, shard, key, value; both Base64) and a newline. */
export function writeArchivedLine(o: ByteOut, r: ArchivedRecord): void {
  o.reserve(100 + 2 * NUMBER_BOUND + stringBound(r.kind) + r.key.length + r.value.length);
  const b = o.buf;
  let u = o.used;
  u = putAscii(b, u, '{"kind":');
  u = putString(b, u, r.kind);
  u = putAscii(b, u, ',"node_id":');
  u = putNumber(b, u, r.node_id);
  u = putAscii(b, u, ',"shard":');
  u = putNumber(b, u, r.shard);
  u = putAscii(b, u, ',"key":"');
  u = putAscii(b, u, r.key);
  u = putAscii(b, u, '","value":"');
  u = putAscii(b, u, r.value);
  u = putAscii(b, u, '"}\n');
  o.used = u;
}
