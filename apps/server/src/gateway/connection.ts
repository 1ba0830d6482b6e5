import type { Socket } from 'node:net';
import type { WebSocket } from 'ws';
import { DirectWriter } from '@parley/protocol/net';
import type { OutboundMeter } from './metrics.ts';

/** Inbound-side bookkeeping the gateway's sweep reads to enforce deadlines. */
export interface Deadlines {
  openedAt: number;
  /**
   * Bumped (wrapping) by every inbound read: a count rather than a clock read
   * per read, which was one per delivered message (its RECVACK). The sweep
   * dates it: `inboundSeen` is the count it last saw and `lastInboundAt` when
   * it first saw that count, so a connection is found idle up to one sweep
   * later than the last byte came. Both are the sweep's alone.
   */
  inbound: number;
  inboundSeen: number;
  lastInboundAt: number;
  authenticated: boolean;
  /** Closes the connection, telling the client why when the protocol can. */
  expire(reason: 'auth timeout' | 'idle timeout'): void;
}

/** Told once, just before a client that does not read is closed. */
export interface OverflowListener {
  overflowed(): void;
}

/** WebSocket close codes used by the gateway. */
export const CloseCode = {
  Normal: 1000,
  GoingAway: 1001,
  ProtocolError: 1002,
  UnsupportedData: 1003,
  PolicyViolation: 1008,
  TooBig: 1009,
  TryAgainLater: 1013,
} as const;

/**
 * A thin wrapper over one WebSocket: bounded outbound buffering, measured for
 * top pressure, and an idempotent close.
 */
export class WsConnection {
  private closed = false;
  /** `sendTextFrame`'s writes to the socket under `socket`. */
  private readonly direct: DirectWriter;

  /**
   * @param maxOutboundBytes `gateway.max_outbound_bytes`: past this the client is not reading and is closed.
   * @param meter sees the buffer after every write.
   * @param overflow told once, just before a client that does not read is closed.
   * @param raw the socket under `socket` (what the HTTP upgrade handed over), for `sendTextFrame`.
   */
  constructor(
    readonly socket: WebSocket,
    private readonly maxOutboundBytes: number,
    private readonly meter: OutboundMeter,
    private readonly overflow: OverflowListener,
    raw: Socket,
  ) {
    this.direct = new DirectWriter(raw);
  }

  get isOpen(): boolean {
    return !this.closed && this.socket.readyState === this.socket.OPEN;
  }

  /** Bytes sent but not yet taken by the client (ws's and the direct writes' of `sendTextFrame`). */
  get outboundBytes(): number {
    return this.socket.bufferedAmount + this.direct.pending;
  }

  /** Sends a text (JSON-RPC) or binary (WKProto) frame; a client that cannot keep up is closed. */
  send(data: string | Uint8Array): void {
    if (!this.writable()) return;
    this.socket.send(data);
    this.meter.observe(this.outboundBytes);
  }

  /**
   * Sends a text message already framed by `wsTextFrame`: one write of those
   * bytes to the socket, which may be shared by every recipient of the same
   * text. Safe beside `send` because the gateway's WebSockets have no
   * extension (no permessage-deflate): ws writes each frame synchronously, in
   * call order, and queues nothing of its own. Written straight to the
   * socket's handle when nothing is queued (see @parley/protocol/net).
   */
  sendTextFrame(frame: Buffer): void {
    if (!this.writable()) return;
    // True only for a frame the kernel took whole through an empty queue: nothing queued to observe.
    if (!this.direct.write(frame)) this.meter.observe(this.outboundBytes);
  }

  /** Whether a frame may be written now; closes a client that does not read. */
  private writable(): boolean {
    if (!this.isOpen) return false;
    const queued = this.outboundBytes;
    if (queued > this.maxOutboundBytes) {
      this.meter.observe(queued);
      this.overflow.overflowed();
      this.close(CloseCode.TryAgainLater, 'outbound buffer full');
      return false;
    }
    return true;
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.close(code, reason);
    const timer = setTimeout(() => this.socket.terminate(), 5000);
    timer.unref();
  }
}
