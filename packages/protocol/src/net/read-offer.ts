import { Buffer } from 'node:buffer';
import type { Socket } from 'node:net';

/**
 * What both read paths of `takeReads` (Node's per-read callback and the read
 * pump) share: when a read may go to the taker, and how one that does not
 * reaches Node's own handler.
 */

/** The parts of a socket `offerable` reads. */
interface OfferState {
  /** The Readable's state: its getters read one bit field, the same shape for every stream. */
  _readableState: { readonly flowing: boolean | null; readonly length: number; readonly destroyed: boolean };
  timeout?: number;
  _events: { data?: unknown };
}

/**
 * Whether a read may be offered to the taker before Node's Readable: the
 * socket flows with nothing buffered, is not destroyed, has no idle timeout
 * to refresh, and has one `data` listener (the one that would get the bytes).
 * Read from the Readable's state, not through the socket's `readableFlowing`,
 * `readableLength` and `destroyed`: those getters are shared by every kind of
 * stream in the process, so each one's look-up of `_readableState` is
 * megamorphic (about 500 instructions a read together).
 */
export function offerable(socket: Socket): boolean {
  const s = socket as unknown as OfferState;
  const rs = s._readableState;
  return (
    rs.flowing === true &&
    rs.length === 0 &&
    // The readable side alone: a destroyed socket's are both, and a read is the readable side's.
    !rs.destroyed &&
    !s.timeout &&
    // One `data` listener (`listenerCount` reads the same slot through a megamorphic keyed look-up).
    typeof s._events.data === 'function'
  );
}

/** Node's stream state the read handler reads its byte count and offset from. */
export interface ReadState {
  streamBaseState: Int32Array;
  kReadBytesOrError: number;
  kArrayBufferOffset: number;
}

/**
 * Hands `n` bytes of `from` at `start` to Node's own read handler as libuv's
 * buffer would reach it: a copy of its own (Node's handler keeps what it is
 * given), its count and offset in the stream state.
 */
export function toNodeHandler(
  state: ReadState,
  handle: object,
  onread: (this: never, data: ArrayBuffer) => unknown,
  from: Buffer,
  start: number,
  n: number,
): unknown {
  const copy = Buffer.allocUnsafe(n);
  from.copy(copy, 0, start, start + n);
  state.streamBaseState[state.kReadBytesOrError] = n;
  state.streamBaseState[state.kArrayBufferOffset] = copy.byteOffset;
  return (onread as (this: object, data: ArrayBuffer) => unknown).call(handle, copy.buffer as ArrayBuffer);
}
