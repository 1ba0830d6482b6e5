import { Buffer } from 'node:buffer';

/** First byte of an unfragmented text frame: FIN, no RSV bits, opcode 1. */
const FIN_TEXT = 0x81;
/** Largest frame payload read on this path, bytes (a send of a few KiB; longer ones go to ws). */
export const MAX_TEXT_BYTES = 8192;
/** Most frames read from one chunk on this path. */
const MAX_FRAMES = 64;

/** Unmasked bytes of one frame (reused: one JavaScript thread, no re-entry). */
const scratch = Buffer.alloc(MAX_TEXT_BYTES);
/** The same bytes through a DataView (words written little-endian whatever the platform's order). */
const scratchView = new DataView(scratch.buffer, scratch.byteOffset, MAX_TEXT_BYTES);

/**
 * The texts of `chunk[start, stop)` when those bytes are nothing but whole,
 * masked, unfragmented, non-empty text frames whose payloads are ASCII, each
 * within `maxPayload` (0: no limit) and `MAX_TEXT_BYTES`; else undefined, and
 * `chunk` is left untouched for ws to parse. ASCII is valid UTF-8 that decodes
 * to the same characters, so for such bytes ws would emit exactly these
 * texts, in this order. `view`, when the caller has one (a shared read
 * buffer's), is a DataView whose offsets are `chunk`'s; else one is made.
 * Payloads are unmasked from it a word at a time, without a copy first.
 */
export function asciiTextFramesOf(
  chunk: Buffer,
  maxPayload: number,
  start = 0,
  stop = chunk.length,
  view?: DataView,
): string[] | undefined {
  const texts: string[] = [];
  const n = stop;
  let at = start;
  while (at < n) {
    if (texts.length === MAX_FRAMES || n - at < 6 || chunk[at] !== FIN_TEXT) return undefined;
    const b1 = chunk[at + 1]!;
    // A client frame is masked.
    if ((b1 & 0x80) === 0) return undefined;
    let len = b1 & 0x7f;
    let mask = at + 2;
    if (len === 126) {
      if (n - at < 8) return undefined;
      len = (chunk[at + 2]! << 8) | chunk[at + 3]!;
      mask = at + 4;
    } else if (len === 127) {
      return undefined;
    }
    if (len === 0 || len > MAX_TEXT_BYTES || (maxPayload > 0 && len > maxPayload)) return undefined;
    const data = mask + 4;
    if (n - data < len) return undefined;
    // The payload is unmasked into the scratch buffer four bytes at a time, read as little-endian
    // words (the key as it stands); `high` collects every byte's top bit (non-zero: not ASCII).
    const key = (chunk[mask]! | (chunk[mask + 1]! << 8) | (chunk[mask + 2]! << 16) | (chunk[mask + 3]! << 24)) >>> 0;
    let high = 0;
    const words = len >>> 2;
    view ??= new DataView(chunk.buffer, chunk.byteOffset, stop);
    for (let w = 0; w < words; w++) {
      const v = view.getInt32(data + 4 * w, true) ^ key;
      scratchView.setInt32(4 * w, v, true);
      high |= v;
    }
    for (let i = words << 2; i < len; i++) {
      const a = chunk[data + i]! ^ chunk[mask + (i & 3)]!;
      scratch[i] = a;
      high |= a;
    }
    high |= high >>> 8;
    high |= high >>> 16;
    if ((high & 0x80) !== 0) return undefined;
    texts.push(scratch.toString('latin1', 0, len));
    at = data + len;
  }
  return texts.length > 0 ? texts : undefined;
}
