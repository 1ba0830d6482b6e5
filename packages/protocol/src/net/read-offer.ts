import type { Socket } from 'node:net';

/**
 * What both read paths of `takeReads` (Node's per-read callback and the read
 * pump) share: when a read may go to the taker, and how one that does not
 * reaches Node's own handler.
 */

/**
 * Whether a read may be offered to the taker before Node's Readable: the
 * socket flows with nothing buffered, is not destroyed, has no idle timeout
 * to refresh, and has one `data` listener (the one that would get the bytes).
 */
export function offerable(socket: Socket): boolean {
  return (
    socket.readableFlowing === true &&
    socket.readableLength === 0 &&
    !socket.destroyed &&
    !socket.timeout &&
    // One `data` listener (`listenerCount` reads the same slot through a megamorphic keyed look-up).
    typeof (socket as unknown as { _events: { data?: unknown } })._events.data === 'function'
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
