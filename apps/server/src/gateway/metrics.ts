import { ReasonCode } from '@parley/shared';
import { PRESSURE_THRESHOLDS } from '../observe/pressure.ts';

/** Why a session was closed for an error, as `session_error` alerts group them. */
export const SessionErrorClass = {
  /** CONNECT refused: bad token, banned user, missing client key. */
  auth: 'auth',
  /** The client broke the protocol: undecodable bytes, a frame out of order, an unknown method. */
  protocol: 'protocol',
  /** No CONNECT within `gateway.auth_timeout`. */
  timeout: 'timeout',
  /** The client stopped reading and its outbound buffer passed `gateway.max_outbound_bytes`. */
  backpressure: 'backpressure',
  /** A server-side failure while handling the session. */
  internal: 'internal',
} as const;
export type SessionErrorClass = (typeof SessionErrorClass)[keyof typeof SessionErrorClass];

/** 0 ok, 1 busy, 2 degraded, 3 critical: the pressure level a fill ratio falls in. */
function levelIndex(ratio: number): number {
  if (ratio >= PRESSURE_THRESHOLDS.critical) return 3;
  if (ratio >= PRESSURE_THRESHOLDS.degraded) return 2;
  if (ratio >= PRESSURE_THRESHOLDS.busy) return 1;
  return 0;
}

/**
 * Outbound buffering of every gateway session, for top pressure. A session's
 * buffer (TCP writable length, WebSocket `bufferedAmount`) grows when its
 * client stops reading; at `capacity` (`gateway.max_outbound_bytes`) the
 * session is closed. The collector reads the highest buffer any session
 * reached since its previous read, so a buffer that fills and closes between
 * two samples is still seen; and when that peak climbs into a higher pressure
 * level the meter asks for a sample at once (`onRise`), so busy and degraded
 * are recorded while the slow session is still open, however fast it fills.
 */
export class OutboundMeter {
  private peakBytes = 0;
  private peakLevel = 0;
  /** Largest buffer of the live sessions now, bytes; the server points it at the connection registry. */
  current: () => number = () => 0;
  /** Called when the peak enters a higher pressure level; the collector samples. */
  onRise: (() => void) | undefined;

  /** @param capacity `gateway.max_outbound_bytes`, bytes. */
  constructor(readonly capacity: number) {}

  /** Records one session's buffered bytes after a write (or just before it is closed for overflow). */
  observe(bytes: number): void {
    if (bytes <= this.peakBytes) return;
    this.peakBytes = bytes;
    const level = levelIndex(bytes / this.capacity);
    if (level > this.peakLevel) {
      this.peakLevel = level;
      this.onRise?.();
    }
  }

  /** The highest buffer since the previous call (at least the current one), bytes; starts the next period. */
  take(): number {
    const now = this.current();
    const peak = Math.max(now, this.peakBytes);
    this.peakBytes = now;
    this.peakLevel = levelIndex(now / this.capacity);
    return peak;
  }
}

/** Counters the gateway keeps for the operations surface (top snapshot, metrics). */
export class GatewayMetrics {
  /** CONNECTs refused for bad credentials. */
  authFailures = 0;
  /** Connections closed, for any reason. */
  closes = 0;
  /** Connections refused at accept because `gateway.max_pending_connections` were waiting for CONNECT. */
  refusedConnections = 0;
  /** Connections that have not completed CONNECT now; the server points it at the connection registry. */
  preLoginConnections: () => number = () => 0;
  /**
   * Sessions closed because of an error, cumulative, keyed
   * `<protocol>.<close_reason>.<class>`. Reasons are a fixed vocabulary, so the
   * map stays small.
   */
  readonly sessionErrors = new Map<string, number>();
  readonly outbound: OutboundMeter;

  constructor(maxOutboundBytes: number) {
    this.outbound = new OutboundMeter(maxOutboundBytes);
  }

  /** Counts one session the gateway closed for an error. */
  sessionError(protocol: string, closeReason: string, cls: SessionErrorClass): void {
    const key = `${protocol || 'unknown'}.${closeReason}.${cls}`;
    this.sessionErrors.set(key, (this.sessionErrors.get(key) ?? 0) + 1);
  }
}

/** The close reason a refused CONNECT is counted under. */
export function refusalReason(reasonCode: number): string {
  switch (reasonCode) {
    case ReasonCode.AuthFail:
      return 'auth_failed';
    case ReasonCode.Ban:
      return 'banned';
    case ReasonCode.ClientKeyIsEmpty:
      return 'client_key_empty';
    default:
      return `connect_refused_${reasonCode}`;
  }
}
