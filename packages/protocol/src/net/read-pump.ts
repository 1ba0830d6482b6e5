import { Buffer } from 'node:buffer';
import type { Socket } from 'node:net';
import { getSystemErrorName } from 'node:util';
import type { ReadPumpNative } from '@parley/readpump';
import { loadOptionalNative } from '../optional-native.ts';
import { offerable, toNodeHandler, type ReadState } from './read-offer.ts';
import type { ReadTaker } from './direct-write.ts';
import { handleOf } from './handle.ts';

/**
 * The reads of many plain TCP sockets in one call into JavaScript per
 * event-loop turn (@parley/readpump: the sockets in one epoll set, read by
 * native code), instead of Node's one callback per read: the per-read glue
 * (libuv's callback, MakeCallback and its callback scope, V8's entry) cost
 * more than a RECVACK's handling. `takeReads` uses it when it is built.
 *
 * A pumped socket's reads are stopped in Node; its handle's `readStart`,
 * `readStop` and `close` are wrapped so that Node's own flow control pauses
 * and resumes the pump and a close takes the descriptor out of the set first.
 * Every read is then offered to the taker under the same conditions as
 * `takeReads`' handle path, or handed to Node's own read handler as Node
 * would have (a copy), so bytes keep their order. At the end of the stream
 * the socket goes back to Node's reading, which reads the end itself; a
 * failed read destroys the socket with the error, as Node does.
 *
 * `PARLEY_READPUMP=off` keeps Node's per-read path, `on` requires the pump
 * (an error at start-up when it is not built), unset takes it when built.
 */

interface PumpHandle {
  fd: number;
  reading: boolean;
  readStart(): number;
  readStop(): number;
  close(cb?: () => void): void;
  onread: (this: PumpHandle, data: ArrayBuffer | undefined) => unknown;
}

interface Entry {
  readonly id: number;
  readonly socket: Socket;
  readonly handle: PumpHandle;
  readonly fd: number;
  /** The socket's taker: each read is offered where it lies in the batch buffer. */
  readonly take: ReadTaker;
  /** Node's own read handler. */
  readonly onread: PumpHandle['onread'];
  /** Out of the set while Node's flow control has reads stopped. */
  paused: boolean;
  /** Bytes the pump read (added to the handle's own count in `bytesRead`). */
  bytes: number;
  /** The group whose call takes this socket's reads instead of `take` (see {@link joinReadGroup}), and the socket's key in it. */
  group: GroupState | undefined;
  key: number;
}

/**
 * Sockets whose reads are taken together: one call per event-loop turn with
 * every read of the group's sockets in that turn, instead of a taker's call
 * per read (a client that can handle many sockets' bytes in one native call).
 */
export interface ReadGroup {
  /**
   * The turn's reads of the group's sockets, each one a taker would have
   * been offered: `k` triples in `reads` (the socket's key in the group, where
   * the read lies in `buf`, its length). Every read must be taken; `buf` is
   * the pump's batch, overwritten on a later turn. A socket that left the
   * group (or closed) during the turn may still have a read here.
   */
  takeReads(buf: Buffer, reads: Int32Array, k: number): void;
  /** The socket of `key` left the group: it left the pump (it is closing) or was taken out. */
  left?(key: number): void;
}

/** A group's reads of the current turn. */
interface GroupState {
  readonly group: ReadGroup;
  reads: Int32Array;
  k: number;
  /** Sockets in the group. */
  members: number;
}

export type ReadPumpImplementation = 'pump' | 'per-read';

const { native, why } = loadOptionalNative<ReadPumpNative>('PARLEY_READPUMP', { on: 'on', off: 'off' }, '@parley/readpump');

/** Whether takeReads pumps (and why not), for start-up logs, the bench's record and tests. */
let enabled = native !== undefined;

export const readPumpImplementation: { readonly name: ReadPumpImplementation; readonly reason: string } = {
  get name(): ReadPumpImplementation {
    return enabled ? 'pump' : 'per-read';
  },
  reason: why,
};

/**
 * Turns the pump off (or back on, when built) for sockets taken from now on;
 * sockets already pumped stay pumped. For tests and measurements that compare
 * both paths in one process.
 */
export function setReadPumpEnabled(on: boolean): void {
  enabled = on && native !== undefined;
}

/** Whether a socket taken now is pumped. */
export function readPumpEnabled(): boolean {
  return enabled;
}

const entries = new Map<number, Entry>();
/** The entry of each pumped socket (for joining a group). */
const bySocket = new WeakMap<Socket, Entry>();
/** The groups of sockets pumped now, and those with reads in the current turn. */
const groups = new Map<ReadGroup, GroupState>();
const groupsWithReads: GroupState[] = [];

/** Turns with reads and the reads in them, since start (their ratio is the pump's batching), and the sockets pumped now. */
export const readPumpStats = {
  get batches(): number {
    return batchCount;
  },
  get reads(): number {
    return readCount;
  },
  get sockets(): number {
    return entries.size;
  },
};
/**
 * The counts behind `readPumpStats`, kept as module variables: `onBatch`'s
 * increments of an object's fields went through generic IC calls (four a turn).
 */
let batchCount = 0;
let readCount = 0;
let nextId = 0;
let batch: Buffer | undefined;
let batchView: DataView | undefined;
let state: ReadState | undefined;

function readError(status: number): Error {
  const code = getSystemErrorName(status);
  return Object.assign(new Error(`read ${code}`), { errno: status, code, syscall: 'read' });
}

/** One turn's reads: records as src/readpump.c writes them. */
function onBatch(count: number, bytes: number): void {
  const view = batchView!;
  const buf = batch!;
  batchCount++;
  readCount += count;
  let off = 0;
  for (let i = 0; i < count && off < bytes; i++) {
    const id = view.getInt32(off, true);
    const n = view.getInt32(off + 4, true);
    const start = off + 8;
    off = start + (n > 0 ? (n + 3) & ~3 : 0);
    const e = entries.get(id);
    if (e === undefined) continue;
    if (n > 0) {
      if (e.group !== undefined && offerable(e.socket)) queue(e, e.group, start, n);
      else deliver(e, buf, view, start, n);
    } else if (n === 0) release(e, true);
    else {
      release(e, false);
      if (!e.socket.destroyed) e.socket.destroy(readError(n));
    }
  }
  // The groups' reads, one call each (a socket has one read a turn: its order among other sockets' does not matter).
  for (let i = 0; i < groupsWithReads.length; i++) {
    const g = groupsWithReads[i]!;
    const k = g.k;
    g.k = 0;
    if (g.members === 0) groups.delete(g.group);
    g.group.takeReads(buf, g.reads, k);
  }
  groupsWithReads.length = 0;
}

/** Queues one read of `e` for its group's call at the end of the turn. */
function queue(e: Entry, g: GroupState, start: number, n: number): void {
  e.bytes += n;
  if (g.k === 0) groupsWithReads.push(g);
  let reads = g.reads;
  if (reads.length < 3 * (g.k + 1)) {
    const grown = new Int32Array(2 * reads.length);
    grown.set(reads);
    reads = g.reads = grown;
  }
  const at = 3 * g.k++;
  reads[at] = e.key;
  reads[at + 1] = start;
  reads[at + 2] = n;
}

/**
 * From its next read on, `socket`'s reads go to `group`'s call under `key`
 * instead of to its taker: false (nothing changed) when the socket is not
 * pumped. A read the socket would not offer a taker still goes to Node's
 * handler. The socket leaves the group when it leaves the pump, or with
 * {@link leaveReadGroup}.
 */
export function joinReadGroup(socket: Socket, group: ReadGroup, key: number): boolean {
  const e = bySocket.get(socket);
  if (e === undefined || !entries.has(e.id)) return false;
  leaveGroup(e);
  let g = groups.get(group);
  if (g === undefined) groups.set(group, (g = { group, reads: new Int32Array(3 * 64), k: 0, members: 0 }));
  g.members++;
  e.group = g;
  e.key = key;
  return true;
}

/** `socket`'s reads go to its taker again (reads already queued this turn still go to the group). */
export function leaveReadGroup(socket: Socket): void {
  const e = bySocket.get(socket);
  if (e !== undefined) leaveGroup(e);
}

function leaveGroup(e: Entry): void {
  const g = e.group;
  if (g === undefined) return;
  e.group = undefined;
  if (--g.members === 0 && g.k === 0) groups.delete(g.group);
  g.group.left?.(e.key);
}

/** One read: offered to the taker where it lies when the socket would let it, else to Node's handler as a copy. */
function deliver(e: Entry, buf: Buffer, view: DataView, start: number, n: number): void {
  e.bytes += n;
  if (offerable(e.socket) && e.take(buf, start, n, view)) return;
  toNodeHandler(state!, e.handle, e.onread, buf, start, n);
}

/**
 * The socket leaves the pump: out of the set, its handle's own methods back.
 * `restart`: at the end of the stream, Node's reading resumes (when Node
 * wants reads) and reads the end itself.
 */
function release(e: Entry, restart: boolean): void {
  if (!entries.delete(e.id)) return;
  bySocket.delete(e.socket);
  leaveGroup(e);
  if (!e.paused) native!.remove(e.fd);
  const h = e.handle as unknown as Record<string, unknown>;
  delete h.readStart;
  delete h.readStop;
  delete h.close;
  if (restart && e.handle.reading) e.handle.readStart();
}

/**
 * Moves `socket`'s reads to the pump: false (nothing changed) when the pump
 * is off, the socket is not a plain TCP socket with a descriptor, or the
 * descriptor cannot be added. Each read `take` is offered lies in the batch
 * buffer (shared: overwritten on a later turn).
 */
export function pumpReads(socket: Socket, binding: ReadState, take: ReadTaker): boolean {
  if (!enabled || native === undefined || (socket as { encrypted?: boolean }).encrypted) return false;
  const handle = handleOf<PumpHandle>(socket);
  if (
    !handle ||
    typeof handle.fd !== 'number' ||
    handle.fd < 0 ||
    typeof handle.readStart !== 'function' ||
    typeof handle.readStop !== 'function' ||
    typeof handle.close !== 'function' ||
    typeof handle.onread !== 'function' ||
    Object.prototype.hasOwnProperty.call(handle, 'readStart')
  ) {
    return false;
  }
  if (batch === undefined) {
    batch = Buffer.allocUnsafeSlow(native.batchBytes);
    batchView = new DataView(batch.buffer, batch.byteOffset, batch.length);
    native.open(batch, onBatch);
  }
  state = binding;
  const fd = handle.fd;
  const id = (nextId = (nextId + 1) & 0x7fffffff);
  const reading = handle.reading !== false;
  if (reading) {
    handle.readStop();
    if (native.add(fd, id) !== 0) {
      handle.readStart();
      return false;
    }
  }
  const e: Entry = { id, socket, handle, fd, take, onread: handle.onread, paused: !reading, bytes: 0, group: undefined, key: 0 };
  entries.set(id, e);
  bySocket.set(socket, e);
  const proto = Object.getPrototypeOf(handle) as PumpHandle;
  // Node's flow control (a full Readable stops reads; a read() resumes them) now moves the socket in and out of the set.
  handle.readStop = function () {
    if (!e.paused) {
      native.remove(fd);
      e.paused = true;
    }
    return 0;
  };
  handle.readStart = function () {
    if (e.paused) {
      const err = native.add(fd, id);
      if (err !== 0) return err;
      e.paused = false;
    }
    return 0;
  };
  handle.close = function (this: PumpHandle, cb?: () => void) {
    release(e, false);
    return proto.close.call(this, cb);
  };
  // `socket.bytesRead` (the handle's count, which sees only Node's own reads) counts the pump's reads too.
  const counted = accessorOf(handle, 'bytesRead');
  if (counted) {
    Object.defineProperty(handle, 'bytesRead', {
      configurable: true,
      get(this: PumpHandle): number {
        return (counted.call(this) as number) + e.bytes;
      },
    });
  }
  return true;
}

/** The getter of `name` on `o`'s prototype chain, if it is an accessor. */
function accessorOf(o: object, name: string): (() => unknown) | undefined {
  for (let p = Object.getPrototypeOf(o) as object | null; p !== null; p = Object.getPrototypeOf(p) as object | null) {
    const d = Object.getOwnPropertyDescriptor(p, name);
    if (d) return d.get;
  }
  return undefined;
}
