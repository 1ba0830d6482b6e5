import type { ChannelFlags, MemberListName, Store } from '@parley/store';
import type { AppendQueue } from './append-queue.ts';
import type { ChannelCache } from './channel-cache.ts';

/** Subscriber count above which a channel is flagged `large`. */
export const LARGE_GROUP_THRESHOLD = 500;

/**
 * Channel metadata, subscribers and allow/deny lists. Every mutation
 * invalidates the channel's cached state so the next send sees it.
 * Writes are chunked and not atomic: a failure can leave a durable prefix.
 */
export class ChannelService {
  constructor(
    private readonly store: Store,
    private readonly queue: AppendQueue,
    private readonly cache: ChannelCache,
  ) {}

  async upsert(channelId: string, channelType: number, flags: Partial<ChannelFlags>): Promise<void> {
    await this.store.channels.upsert(channelId, channelType, flags);
    this.cache.invalidate(channelId, channelType);
  }

  async exists(channelId: string, channelType: number): Promise<boolean> {
    return (await this.store.channels.get(channelId, channelType)) !== undefined;
  }

  /** Adds live members; each new one sees only messages after the current tail. */
  async addSubscribers(channelId: string, channelType: number, uids: readonly string[]): Promise<void> {
    const joinSeq = (await this.queue.tail(channelId, channelType)) + 1;
    try {
      await this.store.memberships.addMembers(channelId, channelType, unique(uids), joinSeq);
    } finally {
      this.cache.invalidate(channelId, channelType);
    }
    await this.refreshLarge(channelId, channelType);
  }

  async removeSubscribers(channelId: string, channelType: number, uids: readonly string[]): Promise<void> {
    try {
      await this.store.memberships.removeMembers(channelId, channelType, unique(uids));
    } finally {
      this.cache.invalidate(channelId, channelType);
    }
    await this.refreshLarge(channelId, channelType);
  }

  async removeAllSubscribers(channelId: string, channelType: number): Promise<void> {
    try {
      await this.store.memberships.removeAll(channelId, channelType);
    } finally {
      this.cache.invalidate(channelId, channelType);
    }
    await this.refreshLarge(channelId, channelType);
  }

  async addToList(channelId: string, channelType: number, list: MemberListName, uids: readonly string[]): Promise<void> {
    try {
      await this.store.channels.addMembers(channelId, channelType, list, unique(uids));
    } finally {
      this.cache.invalidate(channelId, channelType);
    }
  }

  async removeFromList(channelId: string, channelType: number, list: MemberListName, uids: readonly string[]): Promise<void> {
    try {
      await this.store.channels.removeMembers(channelId, channelType, list, unique(uids));
    } finally {
      this.cache.invalidate(channelId, channelType);
    }
  }

  listMembers(channelId: string, channelType: number, list: MemberListName): Promise<string[]> {
    return this.store.channels.listMembers(channelId, channelType, list);
  }

  async clearList(channelId: string, channelType: number, list: MemberListName): Promise<void> {
    try {
      await this.store.channels.clearMembers(channelId, channelType, list);
    } finally {
      this.cache.invalidate(channelId, channelType);
    }
  }

  private async refreshLarge(channelId: string, channelType: number): Promise<void> {
    const state = await this.cache.get(channelId, channelType);
    const large = state.subscribers.size > LARGE_GROUP_THRESHOLD ? 1 : 0;
    if (state.info && state.info.large !== large) await this.upsert(channelId, channelType, { large });
  }
}

function unique(uids: readonly string[]): string[] {
  return [...new Set(uids)];
}
