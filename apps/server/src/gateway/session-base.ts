import type { Delivery } from '../messaging/delivery.ts';
import type { Deadlines } from './connection.ts';
import { PendingAcks } from './pending-acks.ts';

/** One connection's bounds and redelivery settings (`delivery.*` config). */
export interface AckPolicy {
  /** A RECV unacknowledged this long is resent; each further resend waits twice as long, ms. */
  retryIntervalMs: number;
  /** Resends of one RECV before the session is closed. */
  retryMaxCount: number;
  /** Unacknowledged RECVs one session may hold; one more closes the session. */
  maxPending: number;
}

/** Default `delivery.*` values (WuKongIM v2's `messageRetry`). */
export const DEFAULT_ACK_POLICY: AckPolicy = { retryIntervalMs: 60_000, retryMaxCount: 5, maxPending: 1024 };

/**
 * The largest CONNECT that can succeed, bytes: uid and device id up to 256
 * characters, token up to 1024, each up to 6 bytes as JSON escapes, plus
 * framing. Before CONNECT completes a connection may send no more than this.
 */
export const MAX_CONNECT_BYTES = 16 * 1024;

/** One counter for every protocol, so a session id names one connection on this node (`/conn/kick`). */
let nextSessionId = 1;

export type SessionState = 'awaiting-connect' | 'authenticating' | 'open' | 'closed';

/**
 * What every gateway session has, whatever its protocol: an id, the identity
 * CONNECT established, the deadlines the gateway sweep enforces, and a
 * bounded window of RECVs not yet acknowledged, resent until they are.
 */
export abstract class SessionBase implements Deadlines {
  readonly id = nextSessionId++;
  uid = '';
  deviceFlag = 0;
  deviceId = '';
  deviceLevel = 0;
  readonly openedAt = Date.now();
  inbound = 0;
  inboundSeen = 0;
  lastInboundAt = this.openedAt;
  authenticated = false;
  /** Called once when CONNECT succeeds (the gateway releases the connection's pre-login budget). */
  onAuthenticated: (() => void) | undefined;
  protected state: SessionState = 'awaiting-connect';
  /** The deliveries awaiting their RECVACK, oldest (re)sent first. */
  private readonly pendingAcks = new PendingAcks();

  constructor(protected readonly ackPolicy: AckPolicy) {}

  abstract expire(reason: 'auth timeout' | 'idle timeout'): void;

  /** Writes a RECV again (marked as a duplicate where the protocol can). */
  protected abstract resend(d: Delivery): void;

  /** Closes a session that does not acknowledge what it receives. */
  protected abstract closeUnacked(reason: string): void;

  /** Un-acked deliveries (for tests and the operations surface). */
  get pendingAckCount(): number {
    return this.pendingAcks.size;
  }

  protected markAuthenticated(): void {
    this.authenticated = true;
    const done = this.onAuthenticated;
    this.onAuthenticated = undefined;
    done?.();
  }

  /**
   * Records a RECV about to be written, until its RECVACK. Returns false, and
   * closes the session, when the window is full: the client is not acking.
   */
  protected awaitAck(d: Delivery): boolean {
    const pending = this.pendingAcks;
    // Dated from the start of the message's fan-out (the clock read once per message, not per recipient).
    const due = (d.fanoutAt || Date.now()) + this.ackPolicy.retryIntervalMs;
    // The same id again (a second delivery of one message) restarts its entry in place.
    const again = pending.size > 0 ? pending.find(d.messageIdText) : undefined;
    if (again !== undefined) {
      again.delivery = d;
      again.due = due;
      again.tries = 0;
      return true;
    }
    if (pending.size >= this.ackPolicy.maxPending) {
      this.closeUnacked('ack window full');
      return false;
    }
    pending.push(d, due);
    return true;
  }

  protected acked(messageId: string): void {
    const e = this.pendingAcks.find(messageId);
    if (e !== undefined) this.pendingAcks.remove(e);
  }

  /**
   * The delivery an in-order RECVACK names: the oldest one awaiting its ack
   * (protocol adapters compare an ack's id with it where the id lies, and
   * call `ackedOldest` when it matches, `acked` otherwise).
   */
  protected oldestPending(): Delivery | undefined {
    return this.pendingAcks.oldest()?.delivery;
  }

  /** The oldest delivery awaiting its ack was acknowledged (see `oldestPending`). */
  protected ackedOldest(): void {
    this.pendingAcks.remove(this.pendingAcks.oldest()!);
  }

  protected forgetAcks(): void {
    this.pendingAcks.clear();
  }

  /**
   * Resends the RECVs whose time has come (called by the gateway sweep, about
   * once a second). Entries are kept in the order they were last sent, so the
   * scan stops at the first one not yet due; one that has used up its resends
   * closes the session.
   */
  redeliverDue(now: number): void {
    const pending = this.pendingAcks;
    for (let p = pending.oldest(); p !== undefined && p.due <= now; p = pending.oldest()) {
      if (p.tries >= this.ackPolicy.retryMaxCount) {
        this.closeUnacked('recv not acknowledged');
        return;
      }
      p.tries++;
      p.due = now + this.ackPolicy.retryIntervalMs * 2 ** p.tries;
      pending.requeueOldest();
      this.resend(p.delivery!);
    }
  }
}
