/** Fields of a `recv` notification, already resolved for one recipient. */
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
  const topic = f.topic ? `"topic":${JSON.stringify(f.topic)},` : '';
  const expire = f.expire ? `"expire":${f.expire},` : '';
  return (
    `{"jsonrpc":"2.0","method":"recv","params":{"header":{${header}},${setting}${expire}` +
    `"messageId":"${f.messageId}","messageSeq":${f.messageSeq},"clientMsgNo":${JSON.stringify(f.clientMsgNo)},` +
    `"timestamp":${f.timestamp},"channelId":${JSON.stringify(f.channelId)},"channelType":${f.channelType},${topic}` +
    `"fromUid":${JSON.stringify(f.fromUid)},"payload":${payloadJson}}}`
  );
}
