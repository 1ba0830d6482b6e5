import type { WebSocket } from 'ws';

/** Inbound-side bookkeeping the gateway's sweep reads to enforce deadlines. */
export interface Deadlines {
  openedAt: number;
  lastInboundAt: number;
  authenticated: boolean;
  /** Closes the connection, telling the client why when the protocol can. */
  expire(reason: 'auth timeout' | 'idle timeout'): void;
}

/** WebSocket close codes used by the gateway. */
export const CloseCode = {
  Normal: 1000,
  ProtocolError: 1002,
  UnsupportedData: 1003,
  PolicyViolation: 1008,
  TooBig: 1009,
  TryAgainLater: 1013,
} as const;

/** A thin wrapper over one WebSocket: bounded outbound buffering, idempotent close. */
export class WsConnection {
  private closed = false;

  constructor(
    readonly socket: WebSocket,
    private readonly maxOutboundBytes: number,
  ) {}

  get isOpen(): boolean {
    return !this.closed && this.socket.readyState === this.socket.OPEN;
  }

  /** Sends a text (JSON-RPC) or binary (WKProto) frame; a client that cannot keep up is closed. */
  send(data: string | Uint8Array): void {
    if (!this.isOpen) return;
    if (this.socket.bufferedAmount > this.maxOutboundBytes) {
      this.close(CloseCode.TryAgainLater, 'outbound buffer full');
      return;
    }
    this.socket.send(data);
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.close(code, reason);
    const timer = setTimeout(() => this.socket.terminate(), 5000);
    timer.unref();
  }
}
