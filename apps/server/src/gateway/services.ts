import type { TokenService } from '../identity/token.service.ts';
import type { Presence } from '../messaging/presence.ts';
import type { SendService } from '../messaging/send.service.ts';

/** Counters the gateway keeps for the operations surface. */
export interface GatewayMetrics {
  authFailures: number;
  closes: number;
}

/** What a session needs from the rest of the server. */
export interface GatewayServices {
  nodeId: number;
  tokens: TokenService;
  send: SendService;
  presence: Presence;
  metrics: GatewayMetrics;
}
