/**
 * Typed errors of the WKProto library. A decode error means the peer sent bytes
 * that violate the wire contract: the caller closes the connection.
 */

/** Why a byte stream could not be decoded. */
export type WkprotoDecodeErrorCode =
  | 'VARINT_TOO_LONG'
  | 'REMAINING_LENGTH_TOO_LARGE'
  | 'UNKNOWN_PACKET_TYPE'
  | 'TRUNCATED'
  | 'BAD_STRING_LENGTH'
  | 'BAD_VERSION'
  | 'DECODER_FAILED';

/** The peer sent a malformed, oversized or unknown frame. */
export class WkprotoDecodeError extends Error {
  override readonly name = 'WkprotoDecodeError';
  constructor(
    readonly code: WkprotoDecodeErrorCode,
    message: string,
  ) {
    super(`${code}: ${message}`);
  }
}

/** A packet object cannot be represented on the wire at the requested version. */
export class WkprotoEncodeError extends Error {
  override readonly name = 'WkprotoEncodeError';
}

/** Why a key exchange, decryption or msg_key check failed. */
export type WkprotoCryptoErrorCode = 'BAD_PUBLIC_KEY' | 'BAD_SALT' | 'DECRYPT_FAILED' | 'MSG_KEY_MISMATCH';

/** Key exchange or payload crypto failure (map to reason 2 at CONNECT, 8 at SEND). */
export class WkprotoCryptoError extends Error {
  override readonly name = 'WkprotoCryptoError';
  constructor(
    readonly code: WkprotoCryptoErrorCode,
    message: string,
  ) {
    super(`${code}: ${message}`);
  }
}
