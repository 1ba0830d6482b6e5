import { Buffer } from 'node:buffer';
import { BASE64, type SendParams } from './params.ts';
import type { JsonRpcId } from './frame.ts';

/**
 * A `send` request in the compact form the bench and the SDK clients write
 * (no white space, camelCase keys in this order):
 *
 *     {["jsonrpc":"2.0",]"method":"send",
 *      "id":<id>,"params":{"clientMsgNo":"…","channelId":"…","channelType":<n>,"payload":<p>[,"header":<h>]}}
 *
 * with `"id"` either before or after `"params"`; `<id>` an integer of at most
 * 15 digits or a non-empty string; strings with no escape or control
 * character; `<p>` a Base64 string or a flat object (see {@link flatObjectEnd});
 * `<h>` `{}` or `{"redDot":true|false}`. Groups: 1 numeric id, 2 string id
 * (before params), 3 clientMsgNo, 4 channelId, 5 channelType, 6 Base64
 * payload, 7 object payload, 8 redDot, 9 numeric id, 10 string id (after params).
 */
const COMPACT_SEND = new RegExp(
  '^\\{(?:"jsonrpc":"2\\.0",)?"method":"send",(?:"id":(?:(0|[1-9]\\d{0,14})|"([^"\\\\\\x00-\\x1f]+)"),)?' +
    '"params":\\{"clientMsgNo":"([^"\\\\\\x00-\\x1f]{0,1024})","channelId":"([^"\\\\\\x00-\\x1f]{0,1024})",' +
    '"channelType":(0|[1-9]\\d{0,2}),"payload":(?:"([A-Za-z0-9+/]*={0,2})"|(\\{[^{}[\\]]*\\}))' +
    '(?:,"header":\\{(?:"redDot":(true|false))?\\})?\\}(?:,"id":(?:(0|[1-9]\\d{0,14})|"([^"\\\\\\x00-\\x1f]+)"))?\\}$',
);

/**
 * One member of a flat payload object: a key that cannot be an array index
 * (JSON.stringify writes those first) and a value JSON.stringify writes back
 * as it stands: a string with nothing it escapes (no quote, backslash, control
 * character or surrogate), an integer of at most 15 digits other than -0,
 * true, false or null; then `,` or the closing `}`.
 */
const MEMBER =
  // eslint-disable-next-line no-control-regex -- control characters are what JSON.stringify escapes
  /"([A-Za-z_$][^"\\\x00-\x1f\ud800-\udfff]{0,63})":(?:"[^"\\\x00-\x1f\ud800-\udfff]*"|0|-?[1-9]\d{0,14}|true|false|null)([,}])/y;

/** Most members a payload object may have on this path. */
const MAX_MEMBERS = 16;

const keys: string[] = [];

/**
 * Whether `text` (a `{…}` with no nested brace or bracket) is a flat object
 * whose JSON.stringify after JSON.parse is `text` itself: members as
 * {@link MEMBER} reads them, each key once.
 */
function isCanonicalFlatObject(text: string): boolean {
  if (text === '{}') return true;
  keys.length = 0;
  MEMBER.lastIndex = 1;
  for (;;) {
    const m = MEMBER.exec(text);
    if (m === null || keys.length === MAX_MEMBERS || keys.includes(m[1]!)) return false;
    keys.push(m[1]!);
    if (m[2] === '}') return MEMBER.lastIndex === text.length;
  }
}

/** A `send` read from its compact form: the request id and its params. */
export interface CompactSend {
  id: JsonRpcId;
  params: SendParams;
}

/**
 * The id and params of a frame that is a compact `send` (see above), else
 * undefined. For a frame it reads, `decodeJsonRpc` yields a `send` request
 * with this id and `readSendParams` accepts its params and returns these
 * same params (payload bytes and recv text included), so a session may take
 * this path and hand every other frame to the full decoder. One regular
 * expression instead of JSON.parse, the params schema and re-serializing an
 * object payload: once per message.
 */
export function compactSend(text: string): CompactSend | undefined {
  if (text.charCodeAt(text.length - 1) !== 0x7d) return undefined;
  const m = COMPACT_SEND.exec(text);
  if (m === null) return undefined;
  const before = m[1] !== undefined || m[2] !== undefined;
  const after = m[9] !== undefined || m[10] !== undefined;
  // Exactly one id: a frame without one is a notification, with two its last counts.
  if (before === after) return undefined;
  const channelType = Number(m[5]);
  if (channelType > 255) return undefined;
  let payload: Uint8Array;
  let payloadJson: string | undefined;
  const base64 = m[6];
  if (base64 !== undefined) {
    // readSendParams takes a string that is JSON text as its UTF-8 bytes: of Base64's
    // characters, only texts starting with a digit, "true" and "null" can be.
    const first = base64.charCodeAt(0);
    if (base64 === '' || (first >= 0x30 && first <= 0x39) || base64 === 'true' || base64 === 'null' || !BASE64.test(base64)) {
      return undefined;
    }
    payload = Buffer.from(base64, 'base64');
  } else {
    const object = m[7]!;
    if (!isCanonicalFlatObject(object)) return undefined;
    payload = Buffer.from(object, 'utf8');
    payloadJson = object;
  }
  const redDot = m[8] === 'true';
  return {
    id: before ? (m[1] !== undefined ? Number(m[1]) : m[2]!) : m[9] !== undefined ? Number(m[9]) : m[10]!,
    params: {
      header: { noPersist: false, redDot, syncOnce: false, dup: false, end: false },
      setting: 0,
      msgKey: '',
      expire: 0,
      clientMsgNo: m[3]!,
      streamNo: '',
      channelId: m[4]!,
      channelType,
      topic: '',
      payload,
      payloadJson,
    },
  };
}
