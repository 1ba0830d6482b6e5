import type { TokenService } from '../identity/token.service.ts';
import type { Presence } from '../messaging/presence.ts';
import { ReasonCode } from '@parley/shared';
import type { Logger } from 'pino';
import type { SendCommand, SendOutcome, SendService } from '../messaging/send.service.ts';
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
  /**
   * A `ban` on the user's own person channel refuses CONNECT (reason 19): asked only when the
   * device has no record (the token look-up reads the ban with the credentials otherwise).
   */
  isUserBanned(uid: string): Promise<boolean>;
}

/**
 * Starts a session's send and hands its outcome to `settle` once it is
 * settled (after the durable commit). A failure thrown by the store becomes a
 * SystemError outcome: the store logs its own failures once per kind, the
 * sender gets a reason and keeps its session.
 */
export function startSend(
  send: SendService,
  cmd: SendCommand,
  log: Logger,
  sessionId: number,
  settle: (outcome: SendOutcome) => void,
): void {
  send.submit(cmd, settle, (err: unknown) => {
    log.debug({ err: (err as Error).message, session: sessionId }, 'send failed');
    settle({ reason: ReasonCode.SystemError, messageId: 0n, messageSeq: 0 });
  });
}
