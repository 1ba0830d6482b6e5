/**
 * The JSON-RPC client's in-place receive path: reads the `recv` notifications
 * of a socket chunk straight from its bytes (WebSocket frames from the server
 * are unmasked) and writes their `recvack` frames into one buffer, so a
 * delivery costs no frame parsing, UTF-8 decoding, `JSON.parse`, strings or
 * objects. Only one exact shape is read here, a strict subset of JSON whose
 * values the reference path (the client's frame parser, `JSON.parse`) would
 * read the same; anything else stops the fast path and goes to the parser,
 * which decides as before.
 */
import { Buffer } from 'node:buffer';
import { randomFillSync } from 'node:crypto';

/** First byte of an unfragmented text frame: FIN, no RSV bits, opcode 1. */
const FIN_TEXT = 0x81;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const CLOSE_BRACE = 0x7d;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;

const ascii = (s: string): Uint8Array => Buffer.from(s, 'latin1');
const HEAD = lit('{"jsonrpc":"2.0","method":"recv","params":{"header":{');
const TRUE = lit(':true');
const MESSAGE_ID = lit('},"messageId":"');
const MESSAGE_SEQ = lit('","messageSeq":');
const CLIENT_MSG_NO = lit(',"clientMsgNo":"');
const TIMESTAMP = lit('","timestamp":');
const CHANNEL_ID = lit(',"channelId":"');
const CHANNEL_TYPE = lit('","channelType":');
const FROM_UID = lit(',"fromUid":"');
const PAYLOAD_B = lit('","payload":{"b":"');
const TAIL = lit('"}}}');

/** Where the fields of the last `recv` read by {@link readRecv} lie in its buffer. */
export const recvAt = { idStart: 0, idEnd: 0, seqStart: 0, seqEnd: 0, bodyStart: 0, bodyEnd: 0 };

/**
 * The buffer being read, as 32-bit words: a DataView of it, made again only
 * when the buffer changes (the read pump's is always the same one), so that
 * literals are compared and strings checked four bytes a step.
 */
let words: DataView<ArrayBufferLike> = new DataView(new ArrayBuffer(0));
let wordsFor: Uint8Array | undefined;

function wordsOf(buf: Uint8Array): void {
  if (buf === wordsFor) return;
  wordsFor = buf;
  words = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
}

/** A literal's bytes and its whole little-endian 32-bit words. */
interface Literal {
  bytes: Uint8Array;
  words: Int32Array;
}

function lit(s: string): Literal {
  const bytes = ascii(s);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  const w = new Int32Array(bytes.length >> 2);
  for (let k = 0; k < w.length; k++) w[k] = view.getInt32(4 * k, true);
  return { bytes, words: w };
}

/** `l` at `buf[i…]` (before `end`; {@link wordsOf} called for `buf`): the index after it, else -1. */
function literal(buf: Uint8Array, i: number, end: number, l: Literal): number {
  const bytes = l.bytes;
  if (i < 0 || end - i < bytes.length) return -1;
  const w = l.words;
  const at = i;
  for (let k = 0; k < w.length; k++) if (words.getInt32(at + 4 * k, true) !== w[k]) return -1;
  for (let k = 4 * w.length; k < bytes.length; k++) if (buf[i + k] !== bytes[k]) return -1;
  return i + bytes.length;
}

/** The top bit of each byte of a word. */
const HIGH = 0x80808080 | 0;

/** Whether every byte of the word `w` is printable ASCII (0x20-0x7e) other than a quote or a backslash. */
export function plainWord(w: number): boolean {
  // A byte at 0x80 or above.
  if ((w & HIGH) !== 0) return false;
  // Every byte below 0x80: adding 0x60 sets its top bit exactly when it is at least 0x20, adding 1 exactly when it is 0x7f (no carries).
  if ((((w + 0x60606060) | 0) & HIGH) !== HIGH || (((w + 0x01010101) | 0) & HIGH) !== 0) return false;
  // No quote and no backslash: no zero byte in w XOR each, repeated ((v - 0x01..) & ~v & 0x80.. is not 0 exactly when v has one).
  const q = w ^ 0x22222222;
  const b = w ^ 0x5c5c5c5c;
  const zeroIn = (((q - 0x01010101) | 0) & ~q) | (((b - 0x01010101) | 0) & ~b);
  return (zeroIn & HIGH) === 0;
}

/**
 * A JSON string's content at `buf[i…]` up to its closing quote, of printable
 * ASCII without escapes (what `JSON.parse` reads as those very characters):
 * the index of the closing quote, else -1. ({@link wordsOf} called for `buf`.)
 */
function plainString(buf: Uint8Array, i: number, end: number): number {
  if (i < 0) return -1;
  while (end - i >= 4 && plainWord(words.getInt32(i, true))) i += 4;
  for (; i < end; i++) {
    const c = buf[i]!;
    if (c === QUOTE) return i;
    if (c < 0x20 || c > 0x7e || c === BACKSLASH) return -1;
  }
  return -1;
}

/**
 * A JSON number at `buf[i…]` that is a non-negative integer of at most
 * `maxDigits` digits without a leading zero (so that `String(JSON.parse(…))`
 * gives back its digits): the index after it, else -1.
 */
function integer(buf: Uint8Array, i: number, end: number, maxDigits: number): number {
  if (i < 0) return -1;
  const start = i;
  while (i < end && buf[i]! >= DIGIT_0 && buf[i]! <= DIGIT_9) i++;
  const digits = i - start;
  if (digits === 0 || digits > maxDigits || (digits > 1 && buf[start] === DIGIT_0)) return -1;
  return i;
}

/**
 * Reads `buf[start, end)` as the text of one `recv` notification of the
 * exact shape the server writes for a message without topic, setting or
 * expiry whose payload is `{"b": <string>}`: header flags `"name":true`,
 * messageId 1–20 digits, messageSeq, timestamp and channelType integers, the
 * other strings printable ASCII without escapes. True and {@link recvAt} set
 * when it is one; false for anything else (the reference path's to decide).
 */
export function readRecv(buf: Uint8Array, start: number, end: number): boolean {
  wordsOf(buf);
  let i = literal(buf, start, end, HEAD);
  if (i < 0) return false;
  // Header flags: "name":true, comma-separated (names of ASCII letters).
  if (buf[i] !== CLOSE_BRACE) {
    for (;;) {
      if (buf[i] !== QUOTE) return false;
      let k = i + 1;
      while (k < end && (buf[k]! | 0x20) >= 0x61 && (buf[k]! | 0x20) <= 0x7a) k++;
      if (k === i + 1 || buf[k] !== QUOTE || buf[k + 1] !== COLON) return false;
      i = literal(buf, k + 1, end, TRUE);
      if (i < 0) return false;
      if (buf[i] === COMMA) i++;
      else if (buf[i] === CLOSE_BRACE) break;
      else return false;
    }
  }
  i = literal(buf, i, end, MESSAGE_ID);
  const idStart = i;
  // The id is a JSON string echoed as it is; only ids of digits are read here.
  i = integer(buf, i, end, 20);
  const idEnd = i;
  i = literal(buf, i, end, MESSAGE_SEQ);
  const seqStart = i;
  i = integer(buf, i, end, 15);
  const seqEnd = i;
  i = plainString(buf, literal(buf, i, end, CLIENT_MSG_NO), end);
  i = integer(buf, literal(buf, i, end, TIMESTAMP), end, 16);
  i = plainString(buf, literal(buf, i, end, CHANNEL_ID), end);
  i = integer(buf, literal(buf, i, end, CHANNEL_TYPE), end, 3);
  i = plainString(buf, literal(buf, i, end, FROM_UID), end);
  i = literal(buf, i, end, PAYLOAD_B);
  const bodyStart = i;
  i = plainString(buf, i, end);
  const bodyEnd = i;
  if (literal(buf, i, end, TAIL) !== end) return false;
  recvAt.idStart = idStart;
  recvAt.idEnd = idEnd;
  recvAt.seqStart = seqStart;
  recvAt.seqEnd = seqEnd;
  recvAt.bodyStart = bodyStart;
  recvAt.bodyEnd = bodyEnd;
  return true;
}

const ACK_HEAD = ascii('{"jsonrpc":"2.0","method":"recvack","params":{"messageId":"');
const ACK_MID = ascii('","messageSeq":');
/** The recvack text's bytes but the id's and the seq's digits: head, middle and the closing `}}`. */
const ACK_FIXED_BYTES = ACK_HEAD.length + ACK_MID.length + 2;
/** Largest recvack frame: 2 header bytes, a 4-byte mask, the text (ids ≤ 20 digits, seqs ≤ 15). */
const MAX_ACK_FRAME = 6 + ACK_FIXED_BYTES + 20 + 15;

/** Random masking keys (client frames are masked with an unpredictable key), drawn 4 bytes a frame. */
const maskPool = Buffer.alloc(8 * 1024);
let maskAt = maskPool.length;

/**
 * Writes into `out` at `at` the masked WebSocket text frame of the compact
 * `recvack` of the `recv` last read by {@link readRecv} from `buf` (the text
 * the reference path sends); returns the index after it. `out` must have
 * room for {@link MAX_ACK_FRAME} bytes.
 */
export function writeRecvack(buf: Uint8Array, out: Uint8Array, at: number): number {
  const idStart = recvAt.idStart;
  const idEnd = recvAt.idEnd;
  const seqStart = recvAt.seqStart;
  const seqEnd = recvAt.seqEnd;
  const len = ACK_FIXED_BYTES + (idEnd - idStart) + (seqEnd - seqStart);
  if (maskAt === maskPool.length) {
    randomFillSync(maskPool);
    maskAt = 0;
  }
  const m0 = maskPool[maskAt]!;
  const m1 = maskPool[maskAt + 1]!;
  const m2 = maskPool[maskAt + 2]!;
  const m3 = maskPool[maskAt + 3]!;
  maskAt += 4;
  out[at] = FIN_TEXT;
  out[at + 1] = 0x80 | len;
  out[at + 2] = m0;
  out[at + 3] = m1;
  out[at + 4] = m2;
  out[at + 5] = m3;
  // The fixed parts by TypedArray#set (a copy, not a loop over bytes), the id and seq digits from the recv.
  const text = at + 6;
  out.set(ACK_HEAD, text);
  let o = text + ACK_HEAD.length;
  for (let k = idStart; k < idEnd; k++) out[o++] = buf[k]!;
  out.set(ACK_MID, o);
  o += ACK_MID.length;
  for (let k = seqStart; k < seqEnd; k++) out[o++] = buf[k]!;
  out[o++] = CLOSE_BRACE;
  out[o++] = CLOSE_BRACE;
  // Masking, four bytes a step: byte k of the text is XORed with mask byte k mod 4.
  let k = text;
  for (const whole = text + (len & ~3); k < whole; k += 4) {
    out[k]! ^= m0;
    out[k + 1]! ^= m1;
    out[k + 2]! ^= m2;
    out[k + 3]! ^= m3;
  }
  if (k < o) out[k++]! ^= m0;
  if (k < o) out[k++]! ^= m1;
  if (k < o) out[k]! ^= m2;
  return o;
}

/** What one chunk's fast prefix did: where it stopped, recvacks written to `out`. */
export interface FastPrefix {
  /** Where the whole frames read here end; the rest is the frame parser's. */
  taken: number;
  /** Bytes of recvack frames written to the output buffer. */
  ackBytes: number;
}

const prefix: FastPrefix = { taken: 0, ackBytes: 0 };

/**
 * Reads the leading whole frames of `chunk[start, end)` that are unmasked, unfragmented
 * text frames holding a `recv` of the shape {@link readRecv} knows (at most
 * `maxPayload` bytes when that is positive), handing each body to `onBody`
 * (`buf[start, end)`, read during the call only) and writing its recvack
 * frame into `outs.out` (grown when needed). Stops at
 * the first frame of any other kind, or a frame not wholly in the chunk.
 */
export function takeRecvs(
  chunk: Uint8Array,
  start: number,
  end: number,
  maxPayload: number,
  outs: { out: Uint8Array },
  onBody: (buf: Uint8Array, start: number, end: number) => void,
): FastPrefix {
  let at = start;
  let o = 0;
  while (end - at >= 2 && chunk[at] === FIN_TEXT) {
    const b1 = chunk[at + 1]!;
    // A server frame is unmasked; 127 announces a 64-bit length no recv has.
    if (b1 >= 0x7f) break;
    let len = b1;
    let data = at + 2;
    if (len === 126) {
      if (end - at < 4) break;
      len = (chunk[at + 2]! << 8) | chunk[at + 3]!;
      data = at + 4;
    }
    if (end - data < len || (maxPayload > 0 && len > maxPayload)) break;
    if (!readRecv(chunk, data, data + len)) break;
    if (outs.out.length - o < MAX_ACK_FRAME) {
      const grown = new Uint8Array(outs.out.length * 2 + MAX_ACK_FRAME);
      grown.set(outs.out.subarray(0, o));
      outs.out = grown;
    }
    o = writeRecvack(chunk, outs.out, o);
    onBody(chunk, recvAt.bodyStart, recvAt.bodyEnd);
    at = data + len;
  }
  prefix.taken = at;
  prefix.ackBytes = o;
  return prefix;
}
