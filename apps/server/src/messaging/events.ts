import type { Delivery } from './delivery.ts';
import type { SessionHandle } from './presence.ts';

/**
 * Things that happened in the messaging core, for observers such as webhooks.
 * Every hook is optional and called synchronously on the hot path: an
 * observer must only enqueue, never block or throw.
 */
export interface MessagingEvents {
  /** A durable message (ordinary or command) was committed. Not called for transient sends. */
  messageCommitted?(d: Delivery): void;
  /** Recipients of a durable ordinary message with no session on this node. */
  recipientsOffline?(d: Delivery, uids: string[]): void;
  /**
   * A session came online or went offline; `uidSessions` is that uid's session
   * count on this node after the change, `total` every session on this node.
   */
  sessionChanged?(s: SessionHandle, online: boolean, uidSessions: number, total: number): void;
}
