import { ReasonCode } from '@parley/shared';

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

/** Counters the gateway keeps for the operations surface (top snapshot, metrics). */
export class GatewayMetrics {
  /** CONNECTs refused for bad credentials. */
  authFailures = 0;
  /** Connections closed, for any reason. */
  closes = 0;
  /**
   * Sessions closed because of an error, cumulative, keyed
   * `<protocol>.<close_reason>.<class>`. Reasons are a fixed vocabulary, so the
   * map stays small.
   */
  readonly sessionErrors = new Map<string, number>();
  /** Largest outbound buffer of any live session, bytes (not measured yet). */
  outboundBytesMax?: number;

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
