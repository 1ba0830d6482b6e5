/**
 * A `recvack` in the compact form the SDKs and the bench write,
 * `{"jsonrpc":"2.0","method":"recvack","params":{"messageId":"<decimal>","messageSeq":<n>}}`,
 * with a decimal message id of at most 20 digits and a message_seq JSON
 * accepts and the params schema allows (no leading zero, at most 15 digits,
 * so at most Number.MAX_SAFE_INTEGER). Anything else does not match.
 */
const COMPACT_RECVACK = /^\{"jsonrpc":"2\.0","method":"recvack","params":\{"messageId":"(\d{1,20})","messageSeq":(?:0|[1-9]\d{0,14})\}\}$/;

/** Longest text {@link COMPACT_RECVACK} can match. */
const MAX_COMPACT_RECVACK = 120;

/**
 * The message id of a frame that is a compact `recvack` (see above), else
 * undefined. One regular expression instead of JSON.parse, the frame
 * checks and the params schema: for a frame it matches, `decodeJsonRpc` and
 * `readRecvackMessageId` yield a `recvack` notification with this message id
 * and accept it, so a session may take this short path and hand every other
 * frame to the full decoder. Every delivered message is acknowledged once.
 */
export function compactRecvackMessageId(text: string): string | undefined {
  if (text.length > MAX_COMPACT_RECVACK || text.charCodeAt(text.length - 1) !== 0x7d) return undefined;
  const m = COMPACT_RECVACK.exec(text);
  return m === null ? undefined : m[1];
}
