import { ChannelType, personParticipants } from '@parley/shared';
import type { ChannelCache } from './channel-cache.ts';
import type { Delivery } from './delivery.ts';
import type { MessagingEvents } from './events.ts';
import type { Presence, SessionHandle } from './presence.ts';

/** A session on some node of a cluster: `session` is its id on node `node`. */
export interface SenderRef {
  node: number;
  session: number;
}

/**
 * Where RECVs for recipients with sessions on other nodes go (cluster mode):
 * `nodesOf` names the nodes holding a uid's sessions, `send` hands one node
 * every recipient it holds for one delivery.
 */
export interface RemoteFanout {
  nodesOf(uid: string): readonly number[] | undefined;
  send(node: number, uids: string[], delivery: Delivery, exclude: SenderRef | undefined): void;
}

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
  /** Set in cluster mode: recipients on other nodes. */
  remote: RemoteFanout | undefined;

  constructor(
    private readonly presence: Presence,
    private readonly cache: ChannelCache,
    private readonly events: MessagingEvents = {},
  ) {}

  /**
   * `sender` is the sending session when it is on this node; `senderRef` names
   * it when the send was forwarded here from another node. Synchronous when
   * the recipients are known (person channels, cached groups); a promise only
   * while a group's subscribers load.
   */
  deliver(delivery: Delivery, sender?: SessionHandle, senderRef?: SenderRef): Promise<void> | undefined {
    if (delivery.channelType !== ChannelType.Person) {
      const state = this.cache.peekUsed(delivery.channelId, delivery.channelType);
      if (!state) return this.deliverLoading(delivery, sender, senderRef);
      this.deliverToSubscribers(state.subscribers, delivery, sender, senderRef);
      return undefined;
    }
    this.stats.messages++;
    delivery.fanoutAt = Date.now();
    const offline = this.offlineList(delivery);
    const remote = this.remote && new Map<number, string[]>();
    const pair = delivery.participants ?? personParticipants(delivery.channelId);
    if (pair) {
      this.push(pair[0], delivery, sender, offline, remote);
      if (pair[1] !== pair[0]) this.push(pair[1], delivery, sender, offline, remote);
    }
    this.finish(delivery, senderRef, offline, remote);
    return undefined;
  }

  /** A group-like channel whose subscribers are not cached yet: loaded first (once, shared with concurrent sends). */
  private async deliverLoading(delivery: Delivery, sender: SessionHandle | undefined, senderRef: SenderRef | undefined): Promise<void> {
    const state = await this.cache.get(delivery.channelId, delivery.channelType);
    this.deliverToSubscribers(state.subscribers, delivery, sender, senderRef);
  }

  private deliverToSubscribers(
    subscribers: ReadonlySet<string>,
    delivery: Delivery,
    sender: SessionHandle | undefined,
    senderRef: SenderRef | undefined,
  ): void {
    this.stats.messages++;
    delivery.fanoutAt = Date.now();
    const offline = this.offlineList(delivery);
    const remote = this.remote && new Map<number, string[]>();
    for (const uid of subscribers) this.push(uid, delivery, sender, offline, remote);
    this.finish(delivery, senderRef, offline, remote);
  }

  /** Where offline recipients are collected, when someone listens for them. */
  private offlineList(delivery: Delivery): string[] | undefined {
    return this.events.recipientsOffline && delivery.messageSeq > 0 && !delivery.syncOnce ? [] : undefined;
  }

  private finish(
    delivery: Delivery,
    senderRef: SenderRef | undefined,
    offline: string[] | undefined,
    remote: Map<number, string[]> | undefined,
  ): void {
    if (remote) this.sendRemote(remote, delivery, senderRef);
    if (offline && offline.length > 0) this.events.recipientsOffline!(delivery, offline);
  }

  /** Delivers to exactly these uids (request-scoped sends). */
  deliverTo(uids: readonly string[], delivery: Delivery, sender?: SessionHandle, senderRef?: SenderRef): void {
    this.stats.messages++;
    delivery.fanoutAt = Date.now();
    const remote = this.remote && new Map<number, string[]>();
    for (const uid of uids) this.push(uid, delivery, sender, undefined, remote);
    if (remote) this.sendRemote(remote, delivery, senderRef);
  }

  /** A delivery another node sent here: these uids' sessions on this node, except the sending session. */
  deliverLocal(uids: readonly string[], delivery: Delivery, excludeSessionId: number | undefined): void {
    delivery.fanoutAt = Date.now();
    for (const uid of uids) {
      const sessions = this.presence.sessionsOf(uid);
      if (!sessions) continue;
      for (const s of sessions) {
        if (s.id === excludeSessionId) continue;
        s.deliver(delivery);
        this.stats.deliveries++;
      }
    }
  }

  private push(
    uid: string,
    delivery: Delivery,
    sender: SessionHandle | undefined,
    offline: string[] | undefined,
    remote: Map<number, string[]> | undefined,
  ): void {
    const elsewhere = remote && this.remote!.nodesOf(uid);
    if (elsewhere) {
      for (const node of elsewhere) {
        const list = remote.get(node);
        if (list) list.push(uid);
        else remote.set(node, [uid]);
      }
    }
    const sessions = this.presence.sessionsOf(uid);
    if (!sessions) {
      if (!elsewhere) offline?.push(uid);
      return;
    }
    for (const s of sessions) {
      if (s === sender) continue;
      s.deliver(delivery);
      this.stats.deliveries++;
    }
  }

  private sendRemote(remote: Map<number, string[]>, delivery: Delivery, senderRef: SenderRef | undefined): void {
    for (const [node, uids] of remote) this.remote!.send(node, uids, delivery, senderRef);
  }
}
