/** Fields of a `recv` notification, already resolved for one recipient. */
import { Buffer } from 'node:buffer';
export interface RecvFields {
  redDot: boolean;
  syncOnce: boolean;
  noPersist: boolean;
  setting: number;
  expire: number;
  messageId: string;
  messageSeq: number;
  clientMsgNo: string;
  timestamp: number;
  /** The channel as this recipient sees it (the peer uid for person channels). */
  channelId: string;
  channelType: number;
  topic: string;
  fromUid: string;
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * The JSON text of a payload inside `recv`: the bytes themselves when they
 * are a JSON object (sent as an object), otherwise a Base64 string.
 */
export function recvPayloadJson(payload: Uint8Array): string {
  let i = 0;
  while (i < payload.length && (payload[i] === 0x20 || payload[i] === 0x0a || payload[i] === 0x0d || payload[i] === 0x09)) i++;
  if (payload[i] === 0x7b) {
    try {
      const text = decoder.decode(payload);
      const value: unknown = JSON.parse(text);
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) return text;
    } catch {
      /* not JSON: sent as Base64 below */
    }
  }
  return `"${Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString('base64')}"`;
}

/**
 * `JSON.stringify(s)` for a string: the string in quotes as it stands when
 * it holds nothing JSON.stringify escapes (a quote, a backslash, a control
 * character or a surrogate, lone or not), else JSON.stringify's own text.
 * Ids and uids are short and plain: a loop over their characters instead
 * of a call into the runtime, three times per `recv`.
 */
export function jsonString(s: string): string {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return JSON.stringify(s);
  }
  return `"${s}"`;
}

/** A complete `recv` notification frame; `payloadJson` comes from `recvPayloadJson`. */
export function encodeRecv(f: RecvFields, payloadJson: string): string {
  let header = '';
  if (f.redDot) header += '"redDot":true';
  if (f.syncOnce) header += `${header ? ',' : ''}"syncOnce":true`;
  if (f.noPersist) header += `${header ? ',' : ''}"noPersist":true`;
  let setting = '';
  if (f.setting !== 0) {
    const parts: string[] = [];
    if (f.setting & 0x80) parts.push('"receipt":true');
    if (f.setting & 0x20) parts.push('"signal":true');
    if (f.setting & 0x08) parts.push('"topic":true');
    if (f.setting & 0x02) parts.push('"stream":true');
    if (parts.length > 0) setting = `"setting":{${parts.join(',')}},`;
  }
  const topic = f.topic ? `"topic":${jsonString(f.topic)},` : '';
  const expire = f.expire ? `"expire":${f.expire},` : '';
  return (
    `{"jsonrpc":"2.0","method":"recv","params":{"header":{${header}},${setting}${expire}` +
    `"messageId":"${f.messageId}","messageSeq":${f.messageSeq},"clientMsgNo":${jsonString(f.clientMsgNo)},` +
    `"timestamp":${f.timestamp},"channelId":${jsonString(f.channelId)},"channelType":${f.channelType},${topic}` +
    `"fromUid":${jsonString(f.fromUid)},"payload":${payloadJson}}}`
  );
}
