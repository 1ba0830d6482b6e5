import { Type, type Static } from '@sinclair/typebox';

/** Longest uid or channel id accepted anywhere (bytes of UTF-16 code units). */
export const MAX_ID_LENGTH = 256;
/** Longest token accepted by `/user/token`. */
export const MAX_TOKEN_LENGTH = 1024;
/** Most uids one list-shaped request may carry. */
export const MAX_UIDS_PER_REQUEST = 10_000;

export const Uint8 = Type.Integer({ minimum: 0, maximum: 255 });
export const Uint32 = Type.Integer({ minimum: 0, maximum: 4_294_967_295 });
/** A 0/1 style flag: any integer, `1` means on. JSON booleans are rejected. */
export const IntFlag = Type.Integer({ minimum: -2_147_483_648, maximum: 2_147_483_647 });
export const Id = Type.String({ maxLength: MAX_ID_LENGTH });
export const UidList = Type.Array(Id, { maxItems: MAX_UIDS_PER_REQUEST });
/**
 * A 64-bit integer (message ids). A `bigint` in TypeScript, written to JSON
 * as an exact integer literal; never passed through a JS number.
 */
export const Int64 = Type.Unsafe<bigint>({ type: 'integer', description: '64-bit integer, exact' });

/** The largest message id a store keeps (a signed 64-bit column); a body may name larger ones. */
export const MAX_MESSAGE_ID = (1n << 63n) - 1n;

/** A sequence number: unsigned, exact within 2^53. */
export const Seq = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });

/** `{"status":200}`: success of every legacy mutation. */
export const StatusOk = Type.Object({ status: Type.Literal(200) });
export type StatusOk = Static<typeof StatusOk>;

/**
 * The legacy error envelope (`{"msg","status"}`) of most business routes,
 * with Parley's stable machine-readable `code` added.
 */
export const LegacyError = Type.Object({
  msg: Type.String(),
  status: Type.Integer(),
  code: Type.String(),
});
export type LegacyError = Static<typeof LegacyError>;

/** The `{"error"}` envelope of `/message/send` and the operations routes, plus `code`. */
export const ErrorBody = Type.Object({ error: Type.String(), code: Type.String() });
export type ErrorBody = Static<typeof ErrorBody>;
