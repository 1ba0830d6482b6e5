/**
 * Many encrypted WKProto clients' RECVs opened in one native call per
 * event-loop turn (the benchmark generator's group receivers: hundreds of
 * sockets, each read bringing one RECV). The in-place receive path
 * (`onPayload`) costs, per read, the read pump's hand-over, the frame
 * decoder, the RECV scan, a native open with its N-API argument look-ups and
 * the RECVACK's assembly; here the pump hands a group's reads over together
 * (`joinReadGroup`) and @parley/wkcrypto's `openRecvReads` frames, scans,
 * verifies and decrypts all of them and writes their RECVACKs, so JavaScript
 * is left with queueing each RECVACK and handing each payload on.
 *
 * The checks are the in-place path's: a read is taken only when it is all
 * whole, encrypted RECVs of the common shape whose msg_key verifies and
 * whose payload decrypts; any other read (a partial frame, another packet,
 * a failed check) goes to the client's own decoder whole, which decides and
 * reports as before. A client whose decoder holds part of a frame reads on
 * its own path until it holds none.
 */
import { Buffer } from 'node:buffer';
import type { NativeSession, WkcryptoNative } from '@parley/wkcrypto';
import type { ReadGroup } from '../net/read-pump.ts';
import { recvackFrameBytes } from './recv-view.ts';

/** A client in the group: what the group's call hands it. */
export interface BatchReceiver {
  /** Whether its next read may be opened natively (its decoder holds nothing, it is open). */
  batchReady(): boolean;
  /** A read its own decoder takes: `buf[start, start + n)`. */
  readOwn(buf: Buffer, start: number, n: number): void;
  /**
   * One RECV opened natively: its RECVACK frame `out[ackAt, ackAt + ackLen)`
   * (the part not written to the socket yet: the native call writes a
   * read's RECVACKs itself while the slot has the socket's descriptor), its
   * plaintext `out[at, at + len)`.
   */
  opened(out: Buffer, ackAt: number, ackLen: number, at: number, len: number): void;
  /** The RECVs of one read are all handed over (write their RECVACKs). */
  openedRead(): void;
}

/** Reads opened natively, reads declined (read by the client's own decoder) and RECVs opened, since start. */
export const recvBatchStats = {
  get opened(): number {
    return openedReads;
  },
  get declined(): number {
    return declinedReads;
  },
  get frames(): number {
    return openedFrames;
  },
};
let openedReads = 0;
let declinedReads = 0;
let openedFrames = 0;

let enabled = true;

/** Turns the batch open off (or back on) for clients connecting from now on: for tests and measurements of both paths. */
export function setRecvBatchEnabled(on: boolean): void {
  enabled = on;
}

/** Whether a client connecting now joins the group (when its transport and session allow). */
export function recvBatchEnabled(): boolean {
  return enabled;
}

const align4 = (n: number): number => (n + 3) & ~3;

/** The group of one native module: slots (wkcrypto's session table) by client. */
class RecvBatchGroup implements ReadGroup {
  private readonly members: (BatchReceiver | undefined)[] = [];
  /** Each slot's RECVACK frame size (by protocol version). */
  private readonly ackSizes: number[] = [];
  private readonly free: number[] = [];
  /** Slots left since the last call: free only after it, so that a read queued for a slot's last client never reaches its next. */
  private readonly retired: number[] = [];
  /** The reads handed to the native call (those of ready clients). */
  private reads = new Int32Array(3 * 64);
  private out = Buffer.alloc(0);
  private outView = new DataView(this.out.buffer, this.out.byteOffset, 0);

  constructor(private readonly wk: WkcryptoNative) {}

  /**
   * A slot for `member`, its session named by it in the native table; `fd`,
   * the socket's descriptor while nothing else is queued for the socket
   * (else -1), lets the native call write the RECVACKs itself until
   * {@link stopWrites}.
   */
  join(member: BatchReceiver, session: NativeSession, version: number, maxRemaining: number, fd: number): number {
    const slot = this.free.pop() ?? this.members.length;
    this.wk.recvSlot(slot, session, version, maxRemaining, fd);
    this.members[slot] = member;
    this.ackSizes[slot] = recvackFrameBytes(version);
    return slot;
  }

  /** The native call hands `slot`'s RECVACKs back from now on (a write of the client's own is queued on its socket). */
  stopWrites(slot: number): void {
    this.wk.recvSlotStopWrites(slot);
  }

  /** The pump let the socket of `slot` go (it is closing): nothing is written to its descriptor from now on. */
  left(slot: number): void {
    if (this.members[slot] !== undefined) this.wk.recvSlotStopWrites(slot);
  }

  /** Frees `slot` (and the native table's hold on its session). */
  leave(slot: number): void {
    if (this.members[slot] === undefined) return;
    this.members[slot] = undefined;
    this.wk.recvSlot(slot, null, 1, 0, -1);
    this.retired.push(slot);
  }

  takeReads(buf: Buffer, reads: Int32Array, k: number): void {
    try {
      this.take(buf, reads, k);
    } finally {
      for (let s = this.retired.pop(); s !== undefined; s = this.retired.pop()) this.free.push(s);
    }
  }

  private take(buf: Buffer, reads: Int32Array, k: number): void {
    const members = this.members;
    let mine = this.reads;
    if (mine.length < 3 * k) mine = this.reads = new Int32Array(3 * k);
    let m = 0;
    for (let i = 0; i < 3 * k; i += 3) {
      const member = members[reads[i]!];
      if (member === undefined) continue;
      if (!member.batchReady()) {
        declinedReads++;
        member.readOwn(buf, reads[i + 1]!, reads[i + 2]!);
        continue;
      }
      mine[3 * m] = reads[i]!;
      mine[3 * m + 1] = reads[i + 1]!;
      mine[3 * m + 2] = reads[i + 2]!;
      m++;
    }
    if (m === 0) return;
    // Each read's records take no more room than its frames (a RECV carries more than its RECVACK and the padding).
    if (this.out.length < buf.length) {
      this.out = Buffer.allocUnsafeSlow(buf.length + 4096);
      this.outView = new DataView(this.out.buffer, this.out.byteOffset, this.out.length);
    }
    const out = this.out;
    const view = this.outView;
    this.wk.openRecvReads(buf, mine, m, out);
    let at = 0;
    for (let j = 0; j < 3 * m; j += 3) {
      const slot = mine[j]!;
      const frames = view.getInt32(at, true);
      at += 4;
      const member = members[slot];
      if (frames === 0) {
        declinedReads++;
        member?.readOwn(buf, mine[j + 1]!, mine[j + 2]!);
        continue;
      }
      openedReads++;
      openedFrames += frames;
      const ackLen = this.ackSizes[slot]!;
      // The RECVACK bytes the native call wrote to the socket: the first ones of the read's.
      let written = view.getInt32(at, true);
      at += 4;
      for (let f = 0; f < frames; f++) {
        const len = view.getInt32(at, true);
        const skip = written < ackLen ? written : ackLen;
        written -= skip;
        const ackAt = at + 4;
        const plainAt = ackAt + align4(ackLen);
        // A client closed by an earlier payload's handler in this call gets nothing more.
        if (member !== undefined && members[slot] === member) member.opened(out, ackAt + skip, ackLen - skip, plainAt, len);
        at = plainAt + align4(len);
      }
      if (member !== undefined && members[slot] === member) member.openedRead();
    }
  }
}

const groups = new WeakMap<WkcryptoNative, RecvBatchGroup>();

/** The group of `wk` (one per native module, made on first use). */
export function recvBatchGroup(wk: WkcryptoNative): RecvBatchGroup {
  let g = groups.get(wk);
  if (g === undefined) groups.set(wk, (g = new RecvBatchGroup(wk)));
  return g;
}

export type { RecvBatchGroup };
