import { ChannelType, personParticipants } from '@parley/shared';
import type { ChannelCache } from './channel-cache.ts';
import type { Delivery } from './delivery.ts';
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
  ) {}

  async deliver(delivery: Delivery, sender?: SessionHandle): Promise<void> {
    this.stats.messages++;
    if (delivery.channelType === ChannelType.Person) {
      const pair = personParticipants(delivery.channelId);
      if (pair) {
        this.push(pair[0], delivery, sender);
        if (pair[1] !== pair[0]) this.push(pair[1], delivery, sender);
      }
      return;
    }
    const state = await this.cache.get(delivery.channelId, delivery.channelType);
    for (const uid of state.subscribers) this.push(uid, delivery, sender);
  }

  private push(uid: string, delivery: Delivery, sender: SessionHandle | undefined): void {
    const sessions = this.presence.sessionsOf(uid);
    if (!sessions) return;
    for (const s of sessions) {
      if (s === sender) continue;
      s.deliver(delivery);
      this.stats.deliveries++;
    }
  }
}
