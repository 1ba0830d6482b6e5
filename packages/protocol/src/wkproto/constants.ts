/**
 * WKProto wire constants (realtime.md §2). Every numeric value here is fixed by
 * the wire contract; changing one breaks interoperability with real clients.
 */

/** Packet type numbers carried in the high nibble of the fixed header byte. */
export const PacketType = {
  CONNECT: 1,
  CONNACK: 2,
  SEND: 3,
  SENDACK: 4,
  RECV: 5,
  RECVACK: 6,
  PING: 7,
  PONG: 8,
  DISCONNECT: 9,
  SUB: 10,
  SUBACK: 11,
  EVENT: 12,
} as const;

/** Union of the packet type numbers above. */
export type PacketTypeNumber = (typeof PacketType)[keyof typeof PacketType];

/** Fixed-header flag bits (low nibble of byte 0) for every packet except CONNACK. */
export const HeaderFlag = {
  NO_PERSIST: 0x01,
  RED_DOT: 0x02,
  SYNC_ONCE: 0x04,
  DUP: 0x08,
} as const;

/** CONNACK's only flag: a `server_version` byte precedes the body. */
export const CONNACK_HAS_SERVER_VERSION = 0x01;

/** Bits of the SEND/RECV/SUB `setting` byte (realtime.md §2.4). */
export const Setting = {
  RECEIPT: 0x80,
  SIGNAL: 0x20,
  NO_ENCRYPT: 0x10,
  TOPIC: 0x08,
  STREAM: 0x02,
} as const;

/** Lowest and highest protocol versions with a defined layout. */
export const MIN_PROTOCOL_VERSION = 1;
/** `LatestVersion`: 64-bit message_seq. CONNECT version 0 or > 6 negotiates to this. */
export const LATEST_PROTOCOL_VERSION = 6;

/** Largest remaining length (body bytes) a packet may declare: 1 MiB. */
export const MAX_REMAINING_LENGTH = 1_048_576;
/** A remaining-length varint is at most 4 bytes, so a header is at most 5 bytes. */
export const MAX_VARINT_BYTES = 4;
/** Largest fixed header: type byte + 4 varint bytes. */
export const MAX_HEADER_BYTES = 1 + MAX_VARINT_BYTES;
/** String lengths are a signed int16 on the wire: 32767 bytes of UTF-8 at most. */
export const MAX_STRING_BYTES = 32_767;
/** Largest message_seq encodable at protocol versions 1-5 (u32). */
export const MAX_U32 = 0xffff_ffff;

/** CONNACK/SENDACK/DISCONNECT reason codes (http-api.md §1.3): one table, shared with the server. */
export { ReasonCode } from '@parley/shared';

/**
 * The version a session runs at after CONNECT: the client's version, except
 * 0 or anything above 6 which negotiates to 6 (realtime.md §2.3).
 */
export function negotiateVersion(clientVersion: number): number {
  if (clientVersion <= 0 || clientVersion > LATEST_PROTOCOL_VERSION) return LATEST_PROTOCOL_VERSION;
  return clientVersion;
}
