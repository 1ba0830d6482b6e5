import process from 'node:process';
import { Buffer } from 'node:buffer';
import type { Socket } from 'node:net';
import { getSystemErrorName } from 'node:util';
import { pumpReads, readPumpEnabled } from './read-pump.ts';
import { offerable, toNodeHandler } from './read-offer.ts';
import { handleOf } from './handle.ts';

/**
 * Writing a whole frame to a socket's libuv handle, without the Writable
 * machinery of `socket.write` (its state checks, write request callback,
 * `afterWrite` tick and drain bookkeeping): one RECV per recipient is the
 * gateway's most frequent write, and that machinery cost more than the
 * system call itself.
 *
 * Taken (by a socket's `DirectWriter`) only when nothing is queued for the
 * socket, neither in the Writable (`writableLength`) nor in libuv, and the
 * socket is open for writing; every other write goes through `socket.write`
 * as before. Order holds either way: libuv writes its queue in order, and a
 * write that finds anything queued (a direct write the kernel did not take at
 * once included) queues behind it. A direct write libuv could not finish at
 * once stays in libuv's queue, counted by `DirectWriter.queuedBytes`; if it
 * fails, or fails at once, the socket is destroyed with the error, as
 * `socket.write` would have it.
 *
 * Relies on Node's stream binding (`WriteWrap`, `writeBuffer`, the handle's
 * `writeQueueSize` after a write libuv did not finish); when it is not as
 * expected every write takes the ordinary path.
 */

interface WriteReq {
  handle: unknown;
  oncomplete: (this: WriteReq, status: number) => void;
  async: boolean;
  bytes: number;
  buffer: Uint8Array | null;
  writer: DirectWriter | null;
  /** Bytes of the frame libuv had not written when the write returned. */
  pending: number;
}

interface StreamHandle {
  writeQueueSize: number;
  writeBuffer(req: WriteReq, data: Uint8Array): number;
}

/** What this module uses of Node's stream binding. */
export interface StreamBinding {
  WriteWrap: new () => WriteReq;
  /** The last read's byte count (or error) and offset, and whether the last write went async, by these indexes. */
  streamBaseState: Int32Array;
  kLastWriteWasAsync: number;
  kReadBytesOrError: number;
  kArrayBufferOffset: number;
}

/** Node's stream binding, when it is as expected (else undefined, and callers keep Node's ordinary paths). */
export const binding = loadBinding();

function loadBinding(): StreamBinding | undefined {
  try {
    const b = (process as unknown as { binding(name: string): Partial<StreamBinding> }).binding('stream_wrap');
    if (
      typeof b.WriteWrap !== 'function' ||
      !(b.streamBaseState instanceof Int32Array) ||
      typeof b.kLastWriteWasAsync !== 'number' ||
      typeof b.kReadBytesOrError !== 'number' ||
      typeof b.kArrayBufferOffset !== 'number'
    ) {
      return undefined;
    }
    return b as StreamBinding;
  } catch {
    return undefined;
  }
}

/** A write request for the next direct write: reused while writes complete at once (libuv then keeps no hold on it). */
let spare: WriteReq | undefined;

/** The end of a direct write libuv finished later: a failure destroys the socket (unless it already is). */
function onDirectWriteComplete(this: WriteReq, status: number): void {
  const writer = this.writer;
  this.writer = null;
  this.buffer = null;
  if (writer === null) return;
  writer.pending -= this.pending;
  if (status < 0 && !writer.socket.destroyed) writer.socket.destroy(writeError(status));
}

function writeError(status: number): Error {
  const code = getSystemErrorName(status);
  return Object.assign(new Error(`write ${code}`), { errno: status, code, syscall: 'write' });
}

/**
 * The frame writer of one socket. What libuv holds is counted here, not
 * asked of the handle: every byte in its queue came either through
 * `socket.write` (counted by `writableLength` until that write completes) or
 * through a direct write (counted in `pending` until it completes), so both
 * at zero means an empty queue, and the handle's `writeQueueSize` (a call
 * into C++) is read only after a write libuv did not finish.
 */
export class DirectWriter {
  /** Bytes of this socket's direct writes libuv has not finished. */
  pending = 0;
  /**
   * The handle the last direct write went to and its `writeBuffer`, looked up
   * once per handle: the method lies on the prototype of a C++ object, where
   * V8 does not inline the look-up (two generic LoadIC calls a write).
   */
  private writeHandle: StreamHandle | null = null;
  private writeBuffer: StreamHandle['writeBuffer'] | undefined = undefined;

  constructor(readonly socket: Socket) {}

  /**
   * Writes `frame`: straight to the socket's handle when nothing is queued,
   * else through `socket.write`. True when the kernel took the whole frame at
   * once: nothing holds it and the caller may reuse its bytes. False when the
   * frame (or its rest) is held until it is written, or the write failed.
   */
  write(frame: Uint8Array): boolean {
    const socket = this.socket;
    const handle = handleOf<StreamHandle>(socket);
    if (binding === undefined || !this.directWritable(handle)) {
      socket.write(frame);
      return false;
    }
    let writeBuffer = this.writeBuffer;
    if (handle !== this.writeHandle) {
      writeBuffer = handle.writeBuffer;
      if (typeof writeBuffer !== 'function') {
        socket.write(frame);
        return false;
      }
      this.writeHandle = handle;
      this.writeBuffer = writeBuffer;
    }
    const req = spare ?? new binding.WriteWrap();
    spare = undefined;
    req.handle = handle;
    req.oncomplete = onDirectWriteComplete;
    req.async = false;
    req.bytes = 0;
    req.buffer = null;
    req.writer = null;
    req.pending = 0;
    const err = writeBuffer!.call(handle, req, frame);
    if (err !== 0) {
      spare = req;
      socket.destroy(writeError(err));
      return false;
    }
    if (binding.streamBaseState[binding.kLastWriteWasAsync]) {
      // libuv holds the rest of the frame and this request until the write completes.
      req.async = true;
      req.buffer = frame;
      req.writer = this;
      // The queue was empty: what it holds now is this frame's rest.
      req.pending = handle.writeQueueSize;
      this.pending += req.pending;
      return false;
    }
    spare = req;
    return true;
  }

  /** Bytes written and not yet taken by the kernel: the Writable's and the direct writes'. */
  queuedBytes(): number {
    return this.socket.writableLength + this.pending;
  }

  /**
   * Whether the handle-level write may be used now: nothing queued anywhere
   * (see the class) and the socket open for writing. `writable` is false
   * once the socket is ending, ended, destroyed or errored, so those are not
   * asked again (each of Node's getters reads a shared bit field through a
   * look-up every stream type's state passes, a megamorphic one).
   */
  private directWritable(handle: StreamHandle | null | undefined): handle is StreamHandle {
    const socket = this.socket;
    return (
      handle != null &&
      this.pending === 0 &&
      socket.writableLength === 0 &&
      !socket.connecting &&
      socket.writable &&
      socket.writableCorked === 0
    );
  }
}

/** Whether direct writes are in use (false when Node's binding is not as expected). */
export const directWrites = binding !== undefined;

interface ReadHandle {
  onread: (this: ReadHandle, data: ArrayBuffer | undefined) => unknown;
  useUserBuffer?: (buf: Uint8Array) => void;
}

/**
 * Receives one read: the `n` bytes of `buf` from `start` on. `shared` is
 * given when `buf` is a buffer shared by every taken socket and overwritten
 * by later reads (a DataView of the whole of `buf`, for takers that read it
 * by words): a taker then keeps no view of it past the call (it copies what
 * it keeps). Returns true when it has consumed the bytes.
 */
export type ReadTaker = (buf: Buffer, start: number, n: number, shared: DataView | undefined) => boolean;

/**
 * The one buffer the reads of every taken plain TCP socket land in (libuv's
 * per-read buffer otherwise: a 64 KiB allocation per read, cut to the bytes
 * read and wrapped in an ArrayBuffer for JavaScript, then collected). One is
 * enough: reads are handled one at a time, each wholly before the next.
 */
const readBuffer = Buffer.allocUnsafeSlow(64 * 1024);
/** A DataView of the shared read buffer, handed to takers with each read from it. */
const readBufferView = new DataView(readBuffer.buffer, readBuffer.byteOffset, readBuffer.length);

/**
 * Offers every read of `socket`'s libuv handle to `take` before Node's
 * Readable machinery (push, `data` event, read-more tick) sees it, when the
 * socket is flowing with nothing buffered, has one `data` listener (the one
 * that would get the bytes: the caller's own, or one it stands in front of)
 * and no idle timeout to refresh: `take` returns true when it has
 * consumed the bytes (they then reach no listener), false to let Node's own
 * handler deliver them as usual. Reads that are not offered (end of stream,
 * errors, a paused or buffering socket) go to Node's handler unchanged, so
 * bytes keep their order. A plain TCP socket's reads land in one shared
 * buffer (`readBuffer`); a read Node's handler is to see is copied out of it
 * first. Where @parley/readpump is built, a plain TCP socket's reads come
 * instead from the read pump (read-pump.ts), many sockets' in one call per
 * event-loop turn, and are offered to `take` under the same conditions, each
 * where it lies in the pump's batch buffer.
 * Returns false, changing nothing, when the handle or Node's binding is not
 * as expected. Once per socket.
 */
export function takeReads(socket: Socket, take: ReadTaker): boolean {
  const handle = handleOf<ReadHandle>(socket);
  if (binding === undefined || !handle || typeof handle.onread !== 'function') return false;
  // Many sockets' reads in one call per event-loop turn, when @parley/readpump is built (read-pump.ts).
  if (socket.connecting && readPumpEnabled() && !(socket as { encrypted?: boolean }).encrypted) {
    // A client socket has no descriptor before it connects, and reads nothing: the choice waits until then.
    socket.once('connect', () => {
      const h = handleOf<ReadHandle>(socket);
      if (h && !pumpReads(socket, binding, take)) takeHandleReads(socket, h, binding, take);
    });
    return true;
  }
  if (pumpReads(socket, binding, take)) return true;
  takeHandleReads(socket, handle, binding, take);
  return true;
}

/** `takeReads`' path without the pump: the handle's `onread` offers each read first. */
function takeHandleReads(socket: Socket, handle: ReadHandle, binding: StreamBinding, take: ReadTaker): void {
  const state = binding.streamBaseState;
  const { kReadBytesOrError, kArrayBufferOffset } = binding;
  const onread = handle.onread;
  // TLS sockets keep libuv's buffers (their handle decrypts into them).
  if (typeof handle.useUserBuffer === 'function' && !(socket as { encrypted?: boolean }).encrypted) handle.useUserBuffer(readBuffer);
  handle.onread = function (data) {
    const nread = state[kReadBytesOrError]!;
    if (nread <= 0) return onread.call(this, data);
    const reused = data === undefined;
    if (
      offerable(socket) &&
      (reused
        ? take(readBuffer, 0, nread, readBufferView)
        : take(Buffer.from(data, state[kArrayBufferOffset]!, nread), 0, nread, undefined))
    )
      return;
    if (!reused) return onread.call(this, data);
    return toNodeHandler(binding, this, onread, readBuffer, 0, nread);
  };
}
