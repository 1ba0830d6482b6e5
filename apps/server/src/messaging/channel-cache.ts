import { ChannelType } from '@parley/shared';
import type { ChannelRow, ChannelRepository, MembershipRepository } from '@parley/store';

/** Most characters of channel ids (with their types) `ChannelCache` keeps by default. */
export const CHANNEL_CACHE_CHARS_MAX = 4_000_000;

/** What the send path needs to know about one channel, held in memory. */
export interface ChannelState {
  info: ChannelRow | undefined;
  /** Live subscribers (empty for person channels, whose members are the two uids). */
  subscribers: ReadonlySet<string>;
  deny: ReadonlySet<string>;
  allow: ReadonlySet<string>;
}

/**
 * A bounded cache of channel state for permission checks and fan-out. Every
 * write to a channel's metadata, subscribers or lists invalidates its entry;
 * concurrent loads of one channel share a single read.
 */
export class ChannelCache {
  private readonly entries = new Map<string, Promise<ChannelState>>();
  /**
   * The loaded states among `entries` by channel type, then id, for reads that
   * need no promise (the send path's permission check and fan-out): no key
   * string is built per look-up.
   */
  private readonly ready = new Map<number, Map<string, ChannelState>>();
  /** Entries removed so far (see `generation`). */
  private removals = 0;
  /** Characters of the keys in `entries` (each `type:id`). */
  private keyChars = 0;
  /** Cluster mode: told of every local invalidation, so other nodes drop their copy too. */
  onInvalidate: ((channelId: string, channelType: number) => void) | undefined;

  constructor(
    private readonly channels: ChannelRepository,
    private readonly memberships: MembershipRepository,
    private readonly maxEntries = 10_000,
    /**
     * Most characters the entries' keys may hold, besides their count: a WKProto client may name
     * ids of up to 32,767 bytes, so the count alone bounds nothing. The oldest go first.
     */
    private readonly maxKeyChars = CHANNEL_CACHE_CHARS_MAX,
  ) {}

  get(channelId: string, channelType: number): Promise<ChannelState> {
    const key = `${channelType}:${channelId}`;
    const hit = this.touch(key);
    if (hit) return hit;
    const loading = this.load(channelId, channelType);
    this.entries.set(key, loading);
    this.keyChars += key.length;
    loading.then(
      (state) => {
        // Not when the entry was invalidated (or evicted) while it loaded: that state may be stale.
        if (this.entries.get(key) === loading) this.readyOf(channelType).set(channelId, state);
      },
      () => {
        // Only this load's own entry (an invalidation may have started a newer one meanwhile).
        if (this.entries.get(key) === loading && this.entries.delete(key)) this.keyChars -= key.length;
      },
    );
    for (const oldest of this.entries.keys()) {
      if ((this.entries.size <= this.maxEntries && this.keyChars <= this.maxKeyChars) || oldest === key) break;
      this.remove(oldest);
    }
    return loading;
  }

  /**
   * The state of a channel already loaded, with no I/O and no promise, else
   * undefined (then `get` loads it). Does not refresh the entry's recency.
   */
  peek(channelId: string, channelType: number): ChannelState | undefined {
    return this.ready.get(channelType)?.get(channelId);
  }

  /** Entries held and the characters of their keys (a diagnostic; tests read it). */
  get held(): { count: number; chars: number } {
    return { count: this.entries.size, chars: this.keyChars };
  }

  /** Like `peek`, and a hit counts as a use for eviction like `get` (fan-out reads each group once per message). */
  peekUsed(channelId: string, channelType: number): ChannelState | undefined {
    const state = this.ready.get(channelType)?.get(channelId);
    if (state) void this.touch(`${channelType}:${channelId}`);
    return state;
  }

  /**
   * Counts every state this cache removed (an invalidation, another node's change, an eviction).
   * A state `peek` returns changes only by being removed (a later read loads a new one), so a
   * decision made from states read while this count stayed the same holds until it moves.
   */
  get generation(): number {
    return this.removals;
  }

  /** The entry under `key`, moved to the most recently used end (eviction takes the oldest). */
  private touch(key: string): Promise<ChannelState> | undefined {
    const entry = this.entries.get(key);
    if (entry) {
      this.entries.delete(key);
      this.entries.set(key, entry);
    }
    return entry;
  }

  private readyOf(channelType: number): Map<string, ChannelState> {
    let byId = this.ready.get(channelType);
    if (!byId) {
      byId = new Map();
      this.ready.set(channelType, byId);
    }
    return byId;
  }

  private remove(key: string): void {
    this.removals++;
    if (this.entries.delete(key)) this.keyChars -= key.length;
    const colon = key.indexOf(':');
    this.ready.get(Number(key.slice(0, colon)))?.delete(key.slice(colon + 1));
  }

  invalidate(channelId: string, channelType: number): void {
    this.remove(`${channelType}:${channelId}`);
    this.onInvalidate?.(channelId, channelType);
  }

  /** Drops an entry because another node changed the channel (not passed on again). */
  drop(channelId: string, channelType: number): void {
    this.remove(`${channelType}:${channelId}`);
  }

  private async load(channelId: string, channelType: number): Promise<ChannelState> {
    const [state, subscribers] = await Promise.all([
      this.channels.permissionState(channelId, channelType),
      channelType === ChannelType.Person ? Promise.resolve([]) : this.memberships.listLiveUids(channelId, channelType),
    ]);
    return { info: state.row, deny: new Set(state.deny), allow: new Set(state.allow), subscribers: new Set(subscribers) };
  }
}
