import type { TokenService } from '../identity/token.service.ts';
import type { Presence } from '../messaging/presence.ts';
import type { SendService } from '../messaging/send.service.ts';
import type { GatewayMetrics } from './metrics.ts';
import type { AckPolicy } from './session-base.ts';

/** What a session needs from the rest of the server. */
export interface GatewayServices {
  nodeId: number;
  tokens: TokenService;
  send: SendService;
  presence: Presence;
  metrics: GatewayMetrics;
  /** RECV redelivery and the per-session window (`delivery.*`). */
  ackPolicy: AckPolicy;
  /** A `ban` on the user's own person channel refuses CONNECT (reason 19). */
  isUserBanned(uid: string): Promise<boolean>;
}
