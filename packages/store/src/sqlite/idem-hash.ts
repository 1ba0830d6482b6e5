/**
 * The embedded store's idempotency hash: one signed 64-bit integer per
 * idempotency key `(channel_id, channel_type, from_uid, client_msg_no)`,
 * stored in `messages.idem_hash` and indexed (`messages_by_idem_hash`) in
 * place of an index on the four columns, whose entries were several times
 * larger and dirtied more pages per append. A look-up seeks by the hash and
 * still compares all four columns, so two keys with the same hash are never
 * taken for one another: a collision costs one extra row read, nothing else.
 *
 * The hash is FNV-1a 64 over an unambiguous encoding of the key: the channel
 * type, then each string preceded by its length (in UTF-16 code units), one
 * step per 16-bit unit, so `('ab', 'c')` and `('a', 'bc')` differ. Chosen by
 * measurement (callgrind): about 4k instructions per key here against about
 * 11k for the first 8 bytes of SHA-256 through node:crypto `hash()`, while the
 * smaller index saves about 9.5k per message in SQLite (bench/idem-index.ts).
 * FNV is not cryptographic: a sender who crafts many
 * client_msg_nos with one hash only makes the look-ups of those keys read
 * more rows. Stored values depend on it: changing it needs a migration.
 * Imports nothing (the writer thread loads it).
 */

/** Computes the idempotency hash of a key. */
export type IdemHashFn = (channelId: string, channelType: number, fromUid: string, clientMsgNo: string) => bigint;

/**
 * The key's hash as a signed 64-bit bigint (SQLite's integer range), computed
 * in two int32 halves held in locals (no closure: V8 keeps them unboxed, which
 * measured under half the instructions of a closure per step); the 64-bit
 * value never passes through a JS number.
 */
export const idemHash: IdemHashFn = (channelId, channelType, fromUid, clientMsgNo) => {
  // FNV-1a 64: offset basis 0xcbf29ce484222325, prime 0x100000001b3.
  let lo = 0x84222325 | 0;
  let hi = 0xcbf29ce4 | 0;
  // Field 0 is the channel type (two 16-bit units); fields 1-3 the strings, each after its length (two units).
  for (let f = 0; f < 4; f++) {
    const s = f === 1 ? channelId : f === 2 ? fromUid : clientMsgNo;
    const n = f === 0 ? 0 : s.length;
    const head0 = f === 0 ? channelType & 0xffff : n & 0xffff;
    const head1 = f === 0 ? channelType >>> 16 : n >>> 16;
    for (let i = -2; i < n; i++) {
      lo ^= i === -2 ? head0 : i === -1 ? head1 : s.charCodeAt(i);
      // × 0x100000001b3 = × 0x1b3 + × 2^40 (mod 2^64); lo × 0x1b3 < 2^41 is exact in a double.
      const p = (lo >>> 0) * 0x1b3;
      hi = (Math.imul(hi, 0x1b3) + ((p / 0x100000000) | 0) + (lo << 8)) | 0;
      lo = p | 0;
    }
  }
  // hi is signed: shifted up it carries the sign of the 64-bit value.
  return (BigInt(hi) << 32n) | BigInt(lo >>> 0);
};

/** The hash stored for a message: `null` when it has no client_msg_no (such rows are not indexed). */
export function idemHashOf(channelId: string, channelType: number, fromUid: string, clientMsgNo: string): bigint | null {
  return clientMsgNo === '' ? null : idemHash(channelId, channelType, fromUid, clientMsgNo);
}
