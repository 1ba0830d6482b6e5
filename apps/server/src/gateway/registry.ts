import type { Deadlines } from './connection.ts';
import { SessionErrorClass, type GatewayMetrics } from './metrics.ts';

/** One live connection as the gateways track it. */
export interface LiveConnection {
  deadlines: Deadlines;
  /** Known once the first data arrives (WebSocket) or at accept (TCP). */
  protocol: 'jsonrpc' | 'wkproto' | undefined;
  /** Bytes written but not yet taken by the client (TCP writable length, WebSocket `bufferedAmount`). */
  outboundBytes(): number;
  /** RECVs delivered and not yet acknowledged (0 before the protocol is known). */
  pendingAcks(): number;
  terminate(): void;
}

/** How often deadlines are checked, ms. */
const SWEEP_MS = 1000;

/**
 * Every connection of every gateway listener: one sweep enforces the
 * unauthenticated and idle deadlines (cheaper than a timer per socket,
 * re-armed on every packet), and the counts feed the operations surface.
 */
export class ConnectionRegistry {
  private readonly live = new Set<LiveConnection>();
  /** Connections already told to close by the sweep (closing can take a few seconds). */
  private readonly expired = new WeakSet<LiveConnection>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly authTimeoutMs: number,
    private readonly idleTimeoutMs: number,
    /** Counts auth timeouts as session errors; idle timeouts are ordinary departures and are not counted. */
    private readonly metrics?: GatewayMetrics,
  ) {}

  add(c: LiveConnection): void {
    this.live.add(c);
    if (!this.timer) {
      this.timer = setInterval(() => this.sweep(), SWEEP_MS);
      this.timer.unref();
    }
  }

  delete(c: LiveConnection): void {
    this.live.delete(c);
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

  closeAll(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    for (const c of this.live) c.terminate();
    this.live.clear();
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
      } else if (now - d.lastInboundAt > this.idleTimeoutMs) {
        this.expired.add(c);
        d.expire('idle timeout');
      }
    }
  }
}
