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
