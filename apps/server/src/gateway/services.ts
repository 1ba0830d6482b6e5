import type { TokenService } from '../identity/token.service.ts';
import type { Presence } from '../messaging/presence.ts';
import type { SendService } from '../messaging/send.service.ts';

/** Counters the gateway keeps for the operations surface. */
export interface GatewayMetrics {
  authFailures: number;
  closes: number;
  /**
   * Largest outbound buffer (WebSocket `bufferedAmount` / TCP writable
   * length) of any live session, bytes, as of the gateway's last deadline
   * sweep. Scored against `gateway.max_outbound_bytes` for top pressure.
   */
  outboundBytesMax?: number;
}

/** What a session needs from the rest of the server. */
export interface GatewayServices {
  nodeId: number;
  tokens: TokenService;
  send: SendService;
  presence: Presence;
  metrics: GatewayMetrics;
  /** A `ban` on the user's own person channel refuses CONNECT (reason 19). */
  isUserBanned(uid: string): Promise<boolean>;
}
