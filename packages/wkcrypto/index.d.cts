/** One session's AES-128-CBC contexts (opaque). */
export type NativeSession = { readonly __wkcryptoSession: unique symbol };

export interface WkcryptoNative {
  /** A session of a 16-byte AES key and IV. */
  session(key: Uint8Array, iv: Uint8Array): NativeSession;
  /**
   * Writes a sealed frame into `out` from `packed` (a RECV on the server, a
   * SEND on the client: any frame whose msg_key, at msgKeyAt, signs a prefix
   * and the Base64 payload that ends the frame): msgKeyAt, payloadAt, the
   * sign prefix's length and the plaintext's length as little-endian u32s,
   * then the template's first payloadAt bytes, the sign prefix and the
   * plaintext. `out` (payloadAt + the Base64 length of the padded plaintext)
   * receives the template bytes, the Base64 of AES-CBC/PKCS#7(plain) from
   * `payloadAt` and the msg_key over the sign prefix + that Base64 at
   * `msgKeyAt`. Throws a RangeError when the lengths do not fit.
   */
  sealRecv(s: NativeSession, packed: Uint8Array, out: Uint8Array): void;
  /**
   * Verifies `msgKey` over UTF-8(`signPrefix`) + `wire` and decrypts `wire`
   * into `out`: the plaintext's length, or -1 (msg_key mismatch), -2 (not
   * strict Base64 of whole blocks), -3 (bad padding).
   */
  openSend(s: NativeSession, signPrefix: string, wire: Uint8Array, msgKey: string, out: Uint8Array): number;
  /**
   * Client side, a RECV read in place: writes the sign text's prefix from the
   * frame's fields where `fields` says (RECV_FIELDS of @parley/protocol's
   * crypto.ts: the message id, seq, client_msg_no, timestamp, from_uid,
   * channel id and type, the msg_key, the payload), verifies the msg_key over
   * it + the payload and decrypts the payload into `out`: the plaintext's
   * length, or -1, -2, -3 as openSend. Throws a RangeError when a field lies
   * outside the frame.
   */
  openRecv(s: NativeSession, frame: Uint8Array, fields: Int32Array, out: Uint8Array): number;
  /**
   * Names `session` by `slot` (< 2^20) for {@link openRecvReads}, with the
   * protocol version its RECVs are read at, the largest frame body its
   * decoder takes and its socket's descriptor, to which the RECVACKs of its
   * reads are written (-1: they are handed back; a caller passes one only
   * while nothing else is queued for the socket). The session is kept alive
   * until the slot is replaced or cleared; `null` clears the slot.
   */
  recvSlot(slot: number, session: NativeSession | null, version: number, maxRemaining: number, fd: number): void;
  /** The slot's RECVACKs are handed back from now on instead of written to its socket (something else may be queued there). */
  recvSlotStopWrites(slot: number): void;
  /**
   * Client side, many sockets' reads in one call: read i of `k` is
   * `batch[reads[3i + 1], + reads[3i + 2])` of the socket whose session
   * {@link recvSlot} named `reads[3i]`. For each read, in order, `out`
   * receives an int32 count of frames (little-endian, as every int32 here),
   * the bytes of its RECVACKs written to the slot's socket (all, or the
   * first ones the kernel took, after which the slot hands them back; 0
   * without a socket), then per frame its plaintext's length, its RECVACK
   * frame (padded to 4) and its plaintext (padded to 4). A count of 0 (nothing more) declines the
   * read: not all whole, encrypted RECVs of the common shape that verify and
   * decrypt, an empty slot, or no room left in `out`; the caller reads it on
   * its reference path. Returns the bytes of `out` written. Throws a
   * RangeError when a read lies outside the batch, `out` overlaps it or
   * cannot hold a count per read.
   */
  openRecvReads(batch: Uint8Array, reads: Int32Array, k: number, out: Uint8Array): number;
  /** A fresh X25519 key: its random 32-byte private scalar into `out[0, 32)`, its raw public key into `out[32, 64)`. */
  x25519KeyPair(out: Uint8Array): void;
  /**
   * The server's side of a CONNECT's key exchange: a fresh X25519 key pair whose raw public
   * key goes to `out[0, 32)` and whose shared secret with `peer` (the client's raw 32-byte
   * public key) goes to `out[32, 64)`: 0, or -1 when the peer's key is a low-order point.
   */
  x25519Exchange(peer: Uint8Array, out: Uint8Array): number;
}

export const native: WkcryptoNative | undefined;
export const loadError: unknown;
