import { Buffer } from 'node:buffer';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { CMD_SUFFIX } from '@parley/shared';
import type { Delivery } from '../messaging/delivery.ts';
import type { SessionHandle } from '../messaging/presence.ts';

const gzipAsync = promisify(gzip);

/** `Delivery.encoded` key under which the WebhookMessage text is memoized. */
const ENCODED_KEY = 'webhook:message';

/** A `msg.offline` chunk of at least this many uids is sent gzip-compressed (semantics.md §10). */
export const COMPRESS_MIN_UIDS = 512;

/**
 * The WebhookMessage JSON text of a committed message (semantics.md §10).
 * Built by hand so `message_id` stays an exact integer literal: a 64-bit id
 * never passes through a JS number. `channel_id` is the stored id (command
 * messages carry the `____cmd` suffix). Memoized on the delivery, so a message
 * in both `msg.notify` and `msg.offline` is serialized once.
 */
export function webhookMessageJson(d: Delivery): string {
  const cached = d.encoded.get(ENCODED_KEY);
  if (typeof cached === 'string') return cached;
  const channelId = d.syncOnce ? d.channelId + CMD_SUFFIX : d.channelId;
  const text =
    `{"header":{"no_persist":${d.noPersist ? 1 : 0},"red_dot":${d.redDot ? 1 : 0},"sync_once":${d.syncOnce ? 1 : 0}}` +
    `,"setting":${d.setting}` +
    (d.topic !== '' ? `,"topic":${JSON.stringify(d.topic)}` : '') +
    `,"expire":${d.expire}` +
    `,"message_id":${d.messageIdText},"message_idstr":"${d.messageIdText}"` +
    `,"client_msg_no":${JSON.stringify(d.clientMsgNo)}` +
    `,"message_seq":${d.messageSeq}` +
    `,"from_uid":${JSON.stringify(d.fromUid)}` +
    `,"channel_id":${JSON.stringify(channelId)}` +
    `,"channel_type":${d.channelType}` +
    `,"timestamp":${d.timestamp}` +
    `,"payload":"${Buffer.from(d.payload.buffer, d.payload.byteOffset, d.payload.byteLength).toString('base64')}"}`;
  d.encoded.set(ENCODED_KEY, text);
  return text;
}

/** The `msg.notify` body: a JSON array of WebhookMessages. */
export function notifyBody(batch: readonly Delivery[]): string {
  return `[${batch.map(webhookMessageJson).join(',')}]`;
}

/**
 * The `msg.offline` body: the WebhookMessage plus `to_uids`, or, for a chunk
 * of `COMPRESS_MIN_UIDS` or more, `"compress":"gzip"` and `compress_to_uids`
 * = Base64(gzip(JSON array of uids)).
 */
export async function offlineBody(d: Delivery, uids: readonly string[]): Promise<string> {
  const message = webhookMessageJson(d).slice(0, -1);
  const list = JSON.stringify(uids);
  if (uids.length < COMPRESS_MIN_UIDS) return `${message},"to_uids":${list}}`;
  const packed = await gzipAsync(Buffer.from(list));
  return `${message},"compress":"gzip","compress_to_uids":"${packed.toString('base64')}"}`;
}

/**
 * One `user.onlinestatus` entry:
 * `uid-deviceFlag-online(1|0)-sessionID-deviceOnlineCount-totalOnlineCount`,
 * counts being this node's sessions after the change.
 */
export function onlineStatusEntry(s: SessionHandle, online: boolean, uidSessions: number, total: number): string {
  return `${s.uid}-${s.deviceFlag}-${online ? 1 : 0}-${s.id}-${uidSessions}-${total}`;
}
