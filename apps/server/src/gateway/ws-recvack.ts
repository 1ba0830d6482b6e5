import { Buffer } from 'node:buffer';

/** First byte of an unfragmented text frame: FIN, no RSV bits, opcode 1. */
const FIN_TEXT = 0x81;
/** Largest payload of a compact recvack (see `compactRecvackMessageId`), bytes. */
const MAX_RECVACK_BYTES = 120;
/** Most frames read from one chunk on this path (a client acks a burst of RECVs at once). */
const MAX_FRAMES = 64;

/** The bytes of a compact recvack before its message id, and between the id and its message_seq (see `compactRecvackMessageId`). */
const HEAD = Buffer.from('{"jsonrpc":"2.0","method":"recvack","params":{"messageId":"', 'latin1');
const MIDDLE = Buffer.from('","messageSeq":', 'latin1');
/** Most digits of a message id and of a message_seq in a compact recvack. */
const MAX_ID_DIGITS = 20;
const MAX_SEQ_DIGITS = 15;
const DIGIT_0 = 0x30;
/** The shortest compact recvack: a one-digit id and message_seq. */
const SHORTEST = HEAD.length + 1 + MIDDLE.length + 1 + 2;

/*
 * A payload is read four bytes at a time: a little-endian 32-bit word
 * through a DataView (any offset; one bounds check per word, where a typed
 * array costs one per byte), unmasked with one XOR of the frame's key
 * rotated to the word's offset, compared with words of HEAD and MIDDLE or
 * tested for four digits at once. HEAD's words are written out below (a test
 * checks them against HEAD): compared with constants in the code, they cost a
 * third less than loaded from an array.
 */
/** HEAD's last three bytes, `":"` (56–58), little-endian. */
const HEAD_LAST3 = HEAD[56]! | (HEAD[57]! << 8) | (HEAD[58]! << 16);
/** MIDDLE's 15 bytes as three words and three bytes, little-endian. */
const MIDDLE_WORDS = Int32Array.from({ length: 4 }, (_, k) => Buffer.concat([MIDDLE, Buffer.alloc(1)]).readInt32LE(4 * k));
const MIDDLE_0 = MIDDLE_WORDS[0]!;
const MIDDLE_1 = MIDDLE_WORDS[1]!;
const MIDDLE_2 = MIDDLE_WORDS[2]!;
const MIDDLE_3 = MIDDLE_WORDS[3]! & 0xffffff;
/** `}}`, little-endian. */
const CLOSE_2 = 0x7d7d;

/** A payload whose frame ends within 3 bytes of its buffer's end is copied here first (words are read past its end). */
const tail = Buffer.alloc(MAX_RECVACK_BYTES + 4);
const tailView = new DataView(tail.buffer, tail.byteOffset, tail.length);

/**
 * The message ids `compactRecvacksOf` read last, one slot per ack: slot `k`
 * holds bytes 56–79 of its payload unmasked (`":"`, the id's digits from
 * byte 3, then what follows them), and `ackDigitCounts[k]` says how many
 * digits the id has. Overwritten by the next call. No string is made per
 * ack: a session compares the slot with the id it expects (`ackIdMatches`).
 */
const ackSlots = Buffer.alloc(MAX_FRAMES * 24);
const ackDigitCounts = new Uint8Array(MAX_FRAMES);
const ID_SLOT = 24;
const ackSlotsView = new DataView(ackSlots.buffer, ackSlots.byteOffset, ackSlots.length);

/** The message id of ack `slot` of the last `compactRecvacksOf`, as text. */
export function ackIdText(slot: number): string {
  const at = slot * ID_SLOT + 3;
  return ackSlots.toString('latin1', at, at + ackDigitCounts[slot]!);
}

/**
 * A message id as `ackIdMatches` compares it: the words of an ack's slot
 * when the ack names this id (`":"`, its digits, the quote after them; 3 to
 * 24 bytes), then its digit count, the index of the last word and the mask of
 * that word's bytes. Made once per message.
 */
export function ackIdKey(id: string): Int32Array {
  const key = new Int32Array(9);
  const n = id.length;
  if (n > MAX_ID_DIGITS) {
    key[6] = -1;
    return key;
  }
  // The bytes `":"`, the id's characters and `"`, gathered into words here: no concatenated
  // string, whose character reads would make V8 flatten it first.
  const total = n + 4;
  let word = 0x223a22;
  for (let i = 3; i < total; i++) {
    word |= (i === total - 1 ? 0x22 : id.charCodeAt(i - 3) & 0xff) << ((i & 3) << 3);
    if ((i & 3) === 3) {
      key[i >> 2] = word;
      word = 0;
    }
  }
  const last = (total - 1) >> 2;
  if ((total & 3) !== 0) key[last] = word;
  const tailBytes = total - 4 * last;
  key[6] = n;
  key[7] = last;
  key[8] = tailBytes === 4 ? -1 : (1 << (tailBytes << 3)) - 1;
  return key;
}

/** Whether ack `slot` of the last `compactRecvacksOf` names the id of `key` (`ackIdKey`): a few word compares. */
export function ackIdMatches(slot: number, key: Int32Array): boolean {
  if (ackDigitCounts[slot] !== key[6]) return false;
  const o = slot * ID_SLOT;
  const last = key[7]!;
  for (let k = 0; k < last; k++) if (ackSlotsView.getInt32(o + 4 * k, true) !== key[k]) return false;
  return (ackSlotsView.getInt32(o + 4 * last, true) & key[8]!) === key[last];
}

/** The mask `key` (its bytes 0–3 little-endian) as it applies to a word starting at payload offset `at`. */
function keyAt(key: number, at: number): number {
  const s = (at & 3) << 3;
  return (key >>> s) | (key << (32 - s));
}

/** How many of the four bytes of `x`, lowest first, are ASCII digits before the first that is not. */
function leadingDigits(x: number): number {
  // All four: every high nibble 3, every low nibble at most 9 (adding 6 carries into no high nibble).
  if ((x & 0xf0f0f0f0) === 0x30303030 && (((x & 0x0f0f0f0f) + 0x06060606) & 0xf0f0f0f0) === 0) return 4;
  let k = 0;
  for (; k < 4; k++) {
    const c = (x >>> (k << 3)) & 0xff;
    if (c < DIGIT_0 || c > DIGIT_0 + 9) break;
  }
  return k;
}

/** The end of the run of digits from payload offset `at` (no further than `len`), reading words of `v` at `base`. */
function digitsEnd(v: DataView, base: number, key: number, at: number, len: number): number {
  const k = keyAt(key, at);
  let j = at;
  for (;;) {
    const d = leadingDigits(v.getInt32(base + j, true) ^ k);
    j += d;
    if (d < 4 || j >= len) return j < len ? j : len;
  }
}

/**
 * How many compact `recvack`s the bytes `chunk[start, stop)` are, when they
 * are nothing but whole, masked, unfragmented text frames that are each a
 * compact `recvack` (their ids left in `ackSlots`); else 0, and `chunk` is
 * left untouched for ws to parse. Each payload is checked against exactly
 * `compactRecvackMessageId`'s grammar, in place of that regular expression.
 * `view` is a DataView of the whole of `chunk` when the caller has one (a
 * shared read buffer).
 */
export function compactRecvacksOf(chunk: Buffer, start: number, stop: number, maxPayload: number, view?: DataView): number {
  let count = 0;
  let at = start;
  while (at < stop) {
    if (count === MAX_FRAMES || stop - at < 6 || chunk[at] !== FIN_TEXT) return 0;
    const b1 = chunk[at + 1]!;
    const len = b1 & 0x7f;
    // A client frame is masked; 126 and 127 announce longer lengths than a recvack has.
    if ((b1 & 0x80) === 0 || len > MAX_RECVACK_BYTES || len < SHORTEST || (maxPayload > 0 && len > maxPayload)) return 0;
    const data = at + 6;
    const end = data + len;
    if (end > stop) return 0;
    view ??= new DataView(chunk.buffer, chunk.byteOffset, stop);
    const key = view.getInt32(at + 2, true);
    let v = view;
    let base = data;
    if (end + 3 > view.byteLength) {
      chunk.copy(tail, 0, data, end);
      v = tailView;
      base = 0;
    }
    // HEAD, 14 words and 3 bytes: `{"js` `onrp` `c":"` `2.0"` `,"me` `thod` `":"r` `ecva` `ck",` `"par` `ams"` `:{"m` `essa` `geId`, `":"`.
    if (
      (v.getInt32(base, true) ^ key) !== 0x736a227b ||
      (v.getInt32(base + 4, true) ^ key) !== 0x70726e6f ||
      (v.getInt32(base + 8, true) ^ key) !== 0x223a2263 ||
      (v.getInt32(base + 12, true) ^ key) !== 0x22302e32 ||
      (v.getInt32(base + 16, true) ^ key) !== 0x656d222c ||
      (v.getInt32(base + 20, true) ^ key) !== 0x646f6874 ||
      (v.getInt32(base + 24, true) ^ key) !== 0x72223a22 ||
      (v.getInt32(base + 28, true) ^ key) !== 0x61766365 ||
      (v.getInt32(base + 32, true) ^ key) !== 0x2c226b63 ||
      (v.getInt32(base + 36, true) ^ key) !== 0x72617022 ||
      (v.getInt32(base + 40, true) ^ key) !== 0x22736d61 ||
      (v.getInt32(base + 44, true) ^ key) !== 0x6d227b3a ||
      (v.getInt32(base + 48, true) ^ key) !== 0x61737365 ||
      (v.getInt32(base + 52, true) ^ key) !== 0x64496567 ||
      ((v.getInt32(base + 56, true) ^ key) & 0xffffff) !== HEAD_LAST3
    ) {
      return 0;
    }
    // The message id: 1 to 20 digits.
    let j = digitsEnd(v, base, key, HEAD.length, len);
    const digits = j - HEAD.length;
    if (digits === 0 || digits > MAX_ID_DIGITS || len - j < MIDDLE.length + 3) return 0;
    const k = keyAt(key, j);
    if (
      (v.getInt32(base + j, true) ^ k) !== MIDDLE_0 ||
      (v.getInt32(base + j + 4, true) ^ k) !== MIDDLE_1 ||
      (v.getInt32(base + j + 8, true) ^ k) !== MIDDLE_2 ||
      ((v.getInt32(base + j + 12, true) ^ k) & 0xffffff) !== MIDDLE_3
    ) {
      return 0;
    }
    // message_seq: 0, or up to 15 digits without a leading zero; then `}}` ends the payload.
    const seqAt = j + MIDDLE.length;
    j = digitsEnd(v, base, key, seqAt, len);
    const seqDigits = j - seqAt;
    if (seqDigits === 0 || seqDigits > MAX_SEQ_DIGITS || len - j !== 2) return 0;
    if (seqDigits > 1 && ((v.getInt32(base + seqAt, true) ^ keyAt(key, seqAt)) & 0xff) === DIGIT_0) return 0;
    if (((v.getInt32(base + j, true) ^ keyAt(key, j)) & 0xffff) !== CLOSE_2) return 0;
    // The id's digits, unmasked: payload bytes 56–79 (a payload is at least 78 bytes long, and words are read 3 past it).
    const o = count * ID_SLOT;
    for (let w = 0; w < ID_SLOT; w += 4) ackSlotsView.setInt32(o + w, v.getInt32(base + 56 + w, true) ^ key, true);
    ackDigitCounts[count++] = digits;
    at = end;
  }
  return count;
}

/** Receives one compact recvack: its slot, read with `ackIdMatches` / `ackIdText` during the call only. */
export type RecvackSlot = (slot: number) => void;
