/**
 * The embedded store's idempotency hash: one signed 64-bit integer per
 * idempotency key `(channel_id, channel_type, from_uid, client_msg_no)`,
 * stored in `messages.idem_hash` and indexed (`messages_by_idem_hash`) in
 * place of an index on the four columns, whose entries were several times
 * larger and dirtied more pages per append. A look-up seeks by the hash and
 * still compares all four columns, so two keys with the same hash are never
 * taken for one another.
 *
 * The hash is the first 8 bytes of SHA-256 over an unambiguous encoding of
 * the key: the channel type, then each string preceded by its length in
 * UTF-16 code units (so `('ab', 'c')` and `('a', 'bc')` differ). A
 * cryptographic digest, so no sender can cheaply make many keys share one
 * value (which would make every look-up of that value scan them all).
 * Imports only node (the writer thread loads it).
 */
import { hash } from 'node:crypto';

/** Computes the idempotency hash of a key. */
export type IdemHashFn = (channelId: string, channelType: number, fromUid: string, clientMsgNo: string) => bigint;

/** The text hashed for a key: every field delimited by its length, so distinct keys give distinct texts. */
export function idemHashInput(channelId: string, channelType: number, fromUid: string, clientMsgNo: string): string {
  return `${channelType}:${channelId.length}:${channelId}${fromUid.length}:${fromUid}${clientMsgNo.length}:${clientMsgNo}`;
}

/**
 * The key's hash as a signed 64-bit bigint (SQLite's integer range): the
 * first 16 hex digits of SHA-256 read as an unsigned 64-bit value and wrapped
 * to signed. Never passes through a JS number.
 */
export const idemHash: IdemHashFn = (channelId, channelType, fromUid, clientMsgNo) =>
  BigInt.asIntN(64, BigInt(`0x${hash('sha256', idemHashInput(channelId, channelType, fromUid, clientMsgNo)).slice(0, 16)}`));

/** The hash stored for a message: `null` when it has no client_msg_no (such rows are not indexed). */
export function idemHashOf(channelId: string, channelType: number, fromUid: string, clientMsgNo: string): bigint | null {
  return clientMsgNo === '' ? null : idemHash(channelId, channelType, fromUid, clientMsgNo);
}
