/**
 * A RECVACK body read in place, for a server's acknowledgement path (one
 * RECVACK per delivered message): the message id as decimal text, without the
 * packet object, flag object and BigInts {@link decodeBody} makes.
 */
import { Buffer } from 'node:buffer';
import { WkprotoDecodeError } from './errors.ts';
import { writeI64Decimal } from './recv-view.ts';

/** Decimal text of one id: at most 20 characters ('-' and 19 digits). */
const text = Buffer.allocUnsafe(20);

/**
 * The message id of the RECVACK body `buf[start, end)` at protocol `version`
 * as decimal text, exactly what `decodeBody(...).messageId.toString()` gives
 * (signed int64). Throws the TRUNCATED error {@link decodeBody} throws when
 * the body is shorter than the id and the seq (4 bytes up to version 5, 8 at 6).
 */
export function recvackMessageIdText(buf: Buffer, start: number, end: number, version: number): string {
  checkRecvackBody(start, end, version);
  return text.toString('latin1', 0, writeI64Decimal(text, 0, buf, start));
}

/**
 * Throws the TRUNCATED error {@link decodeBody} throws for a RECVACK body
 * `[start, end)` shorter than its id and seq at `version`; a body that passes
 * holds its message id, a big-endian int64, at `start`.
 */
export function checkRecvackBody(start: number, end: number, version: number): void {
  const n = end - start;
  if (n < 8) throw new WkprotoDecodeError('TRUNCATED', `messageId needs 8 bytes, ${n} left in the body`);
  const seqBytes = version <= 5 ? 4 : 8;
  if (n < 8 + seqBytes) throw new WkprotoDecodeError('TRUNCATED', `messageSeq needs ${seqBytes} bytes, ${n - 8} left in the body`);
}
