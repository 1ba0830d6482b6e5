import { ChannelType, personParticipants } from '@parley/shared';
import type { ChannelCache } from './channel-cache.ts';
import type { Delivery } from './delivery.ts';
import type { MessagingEvents } from './events.ts';
import type { Presence, SessionHandle } from './presence.ts';

/** Figures the operations surface reads. */
export interface FanoutStats {
  messages: number;
  deliveries: number;
}

/**
 * Pushes a committed message to every online session of every recipient,
 * except the session that sent it. Best effort, at most once per session:
 * offline devices catch up through message sync.
 */
export class Fanout {
  readonly stats: FanoutStats = { messages: 0, deliveries: 0 };

  constructor(
    private readonly presence: Presence,
    private readonly cache: ChannelCache,
    private readonly events: MessagingEvents = {},
  ) {}

  async deliver(delivery: Delivery, sender?: SessionHandle): Promise<void> {
    this.stats.messages++;
    const offline = this.events.recipientsOffline && delivery.messageSeq > 0 && !delivery.syncOnce ? [] : undefined;
    if (delivery.channelType === ChannelType.Person) {
      const pair = personParticipants(delivery.channelId);
      if (pair) {
        this.push(pair[0], delivery, sender, offline);
        if (pair[1] !== pair[0]) this.push(pair[1], delivery, sender, offline);
      }
    } else {
      const state = await this.cache.get(delivery.channelId, delivery.channelType);
      for (const uid of state.subscribers) this.push(uid, delivery, sender, offline);
    }
    if (offline && offline.length > 0) this.events.recipientsOffline!(delivery, offline);
  }

  /** Delivers to exactly these uids (request-scoped sends). */
  deliverTo(uids: readonly string[], delivery: Delivery, sender?: SessionHandle): void {
    this.stats.messages++;
    for (const uid of uids) this.push(uid, delivery, sender, undefined);
  }

  private push(uid: string, delivery: Delivery, sender: SessionHandle | undefined, offline: string[] | undefined): void {
    const sessions = this.presence.sessionsOf(uid);
    if (!sessions) {
      offline?.push(uid);
      return;
    }
    for (const s of sessions) {
      if (s === sender) continue;
      s.deliver(delivery);
      this.stats.deliveries++;
    }
  }
}
