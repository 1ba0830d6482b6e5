import type { Deadlines } from './connection.ts';
import { SessionErrorClass, type GatewayMetrics } from './metrics.ts';

/** What the registry needs of a session once the protocol is known. */
export interface RegisteredSession {
  redeliverDue(now: number): void;
  goAway(reasonCode: number, reason: string): void;
}

/** One live connection as the gateways track it. */
export interface LiveConnection {
  deadlines: Deadlines;
  /** Known once the first data arrives (WebSocket) or at accept (TCP). */
  protocol: 'jsonrpc' | 'wkproto' | undefined;
  /** Bytes written but not yet taken by the client (TCP writable length, WebSocket `bufferedAmount`). */
  outboundBytes(): number;
  /** RECVs delivered and not yet acknowledged (0 before the protocol is known). */
  pendingAcks(): number;
  /** The session, once the protocol is known. */
  session(): RegisteredSession | undefined;
  /** Closes politely: WebSocket close 1001, TCP FIN. */
  closeGracefully(reason: string): void;
  terminate(): void;
}

/** How often deadlines and redeliveries are checked, ms. */
const SWEEP_MS = 1000;

/**
 * Every connection of every gateway listener: one sweep enforces the
 * unauthenticated and idle deadlines and resends unacknowledged RECVs
 * (cheaper than a timer per socket or per message), the pre-login budget
 * caps connections that have not completed CONNECT, and the counts feed
 * the operations surface.
 */
export class ConnectionRegistry {
  private readonly live = new Set<LiveConnection>();
  /** Connections still counted against the pre-login budget. */
  private readonly preLogin = new Set<LiveConnection>();
  /** Connections already told to close by the sweep (closing can take a few seconds). */
  private readonly expired = new WeakSet<LiveConnection>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly authTimeoutMs: number,
    private readonly idleTimeoutMs: number,
    /** Counts auth timeouts as session errors; idle timeouts are ordinary departures and are not counted. */
    private readonly metrics?: GatewayMetrics,
    /** `gateway.max_pending_connections`: connections that may be waiting for CONNECT at once. */
    private readonly maxPreLogin = Number.POSITIVE_INFINITY,
  ) {}

  /** Whether one more connection fits the pre-login budget; counts a refusal when not. */
  admits(): boolean {
    if (this.preLogin.size < this.maxPreLogin) return true;
    if (this.metrics) this.metrics.refusedConnections++;
    return false;
  }

  /** Connections that have not completed CONNECT yet. */
  get preLoginCount(): number {
    return this.preLogin.size;
  }

  add(c: LiveConnection): void {
    this.live.add(c);
    this.preLogin.add(c);
    if (!this.timer) {
      this.timer = setInterval(() => this.sweep(), SWEEP_MS);
      this.timer.unref();
    }
  }

  /** CONNECT completed: the connection leaves the pre-login budget. */
  loggedIn(c: LiveConnection): void {
    this.preLogin.delete(c);
  }

  delete(c: LiveConnection): void {
    this.live.delete(c);
    this.preLogin.delete(c);
  }

  counts(): { total: number; jsonrpc: number; wkproto: number; pending: number } {
    let jsonrpc = 0;
    let wkproto = 0;
    let pending = 0;
    for (const c of this.live) {
      if (c.protocol === 'jsonrpc') jsonrpc++;
      else if (c.protocol === 'wkproto') wkproto++;
      else pending++;
    }
    return { total: this.live.size, jsonrpc, wkproto, pending };
  }

  /** The largest outbound buffer of any live connection, bytes. */
  maxOutboundBytes(): number {
    let max = 0;
    for (const c of this.live) max = Math.max(max, c.outboundBytes());
    return max;
  }

  /** Un-acknowledged RECVs remembered across every live session. */
  pendingAcks(): number {
    let sum = 0;
    for (const c of this.live) sum += c.pendingAcks();
    return sum;
  }

  /** Tells every session the server is going away (DISCONNECT / `disconnect`); sockets stay open. */
  goAway(reasonCode: number, reason: string): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    for (const c of this.live) c.session()?.goAway(reasonCode, reason);
  }

  /** Closes every connection politely; those still open after `graceMs` are terminated. */
  async closeAll(graceMs = 0): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    for (const c of this.live) c.closeGracefully('server shutting down');
    const until = Date.now() + graceMs;
    while (this.live.size > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    for (const c of this.live) c.terminate();
    this.live.clear();
    this.preLogin.clear();
  }

  private sweep(): void {
    const now = Date.now();
    for (const c of this.live) {
      if (this.expired.has(c)) continue;
      const d = c.deadlines;
      if (!d.authenticated && now - d.openedAt > this.authTimeoutMs) {
        this.expired.add(c);
        this.metrics?.sessionError(c.protocol ?? 'unknown', 'auth_timeout', SessionErrorClass.timeout);
        d.expire('auth timeout');
        continue;
      }
      if (d.inbound !== d.inboundSeen) {
        // Something came since the last sweep: dated now (see Deadlines.inbound).
        d.inboundSeen = d.inbound;
        d.lastInboundAt = now;
      } else if (now - d.lastInboundAt > this.idleTimeoutMs) {
        this.expired.add(c);
        d.expire('idle timeout');
        continue;
      }
      if (d.authenticated) c.session()?.redeliverDue(now);
    }
  }
}
