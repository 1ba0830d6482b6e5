import type { Deadlines } from './connection.ts';

/** Un-acked RECVs remembered per session; the oldest is dropped beyond this. */
export const PENDING_ACK_MAX = 1024;

/** One counter for every protocol, so a session id names one connection on this node (`/conn/kick`). */
let nextSessionId = 1;

export type SessionState = 'awaiting-connect' | 'authenticating' | 'open' | 'closed';

/**
 * What every gateway session has, whatever its protocol: an id, the identity
 * CONNECT established, the deadlines the gateway sweep enforces, and a
 * bounded window of RECVs not yet acknowledged.
 */
export abstract class SessionBase implements Deadlines {
  readonly id = nextSessionId++;
  uid = '';
  deviceFlag = 0;
  deviceId = '';
  deviceLevel = 0;
  readonly openedAt = Date.now();
  lastInboundAt = this.openedAt;
  authenticated = false;
  protected state: SessionState = 'awaiting-connect';
  /** Decimal message id → message seq. */
  private readonly pendingAcks = new Map<string, number>();

  abstract expire(reason: 'auth timeout' | 'idle timeout'): void;

  /** Un-acked deliveries (for tests and the operations surface). */
  get pendingAckCount(): number {
    return this.pendingAcks.size;
  }

  /** Records a delivered RECV until its RECVACK; drops the oldest past the bound. */
  protected awaitAck(messageId: string, messageSeq: number): void {
    if (this.pendingAcks.size >= PENDING_ACK_MAX) {
      const oldest = this.pendingAcks.keys().next().value;
      if (oldest !== undefined) this.pendingAcks.delete(oldest);
    }
    this.pendingAcks.set(messageId, messageSeq);
  }

  protected acked(messageId: string): void {
    this.pendingAcks.delete(messageId);
  }

  protected forgetAcks(): void {
    this.pendingAcks.clear();
  }
}
