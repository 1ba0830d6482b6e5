import { Buffer } from 'node:buffer';
import {
  ChannelType,
  normalizePersonChannel,
  personParticipants,
  personPeer,
  SYSTEM_UID,
  type MessageResp,
  type MessageSyncBatchItem,
  type MessageSyncResult,
} from '@parley/shared';
import { exposedError, invalid } from '../errors.ts';
import type { Store, StoredMessage } from '@parley/store';
import { summarizeEvents } from './event-meta.ts';
import { FLAG_NO_PERSIST, FLAG_RED_DOT, FLAG_SYNC_ONCE } from './send.service.ts';

/** Setting bit of a stream message. */
const SETTING_STREAM = 0x02;

export interface SyncRequest {
  loginUid: string;
  channelId: string;
  channelType: number;
  startSeq: number;
  endSeq: number;
  limit: number;
  /** 0 = down (older), 1 = up (newer). */
  pullMode: number;
  /** Attach stream event meta to stream messages. */
  includeEventMeta?: boolean;
  /** `full` includes lane snapshots; anything else is compact. */
  eventSummaryMode?: string;
}

/** Events read per stream message when summarizing it. */
const MAX_EVENTS_PER_MESSAGE = 10_000;

/** A refused pull: a 400 with code `sync_rejected`. */
const rejected = (message: string) => invalid(message, 'sync_rejected');

/** Limits of the exact query (`POST /messages`), from the seed. */
export const EXACT_QUERY_LIMITS = {
  selectors: 128,
  results: 1024,
  payloadBytes: 16 * 1024 * 1024,
  entriesPerClientMsgNo: 4096,
} as const;

export interface ExactQuery {
  loginUid: string;
  channelId: string;
  channelType: number;
  messageIds: bigint[];
  messageSeqs: number[];
  clientMsgNos: string[];
}

const MAX_LIMIT = 10_000;
const DEFAULT_LIMIT = 100;
const UNBOUNDED = Number.MAX_SAFE_INTEGER;

/** A stored message in the HTTP API's shape, as `loginUid` sees it. */
export function toMessageResp(m: StoredMessage, loginUid: string): MessageResp {
  const resp: MessageResp = {
    header: {
      no_persist: m.flags & FLAG_NO_PERSIST ? 1 : 0,
      red_dot: m.flags & FLAG_RED_DOT ? 1 : 0,
      sync_once: m.flags & FLAG_SYNC_ONCE ? 1 : 0,
    },
    setting: m.setting,
    message_id: m.messageId,
    message_idstr: m.messageId.toString(),
    client_msg_no: m.clientMsgNo,
    message_seq: m.messageSeq,
    from_uid: m.fromUid,
    channel_id: m.channelType === ChannelType.Person ? personPeer(loginUid, m.channelId) : m.channelId,
    channel_type: m.channelType,
    expire: m.expire,
    timestamp: Math.floor(m.createdAt / 1000),
    payload: Buffer.from(m.payload.buffer, m.payload.byteOffset, m.payload.byteLength).toString('base64'),
  };
  if (m.topic !== '') resp.topic = m.topic;
  return resp;
}

/**
 * Channel message pull (`/channel/messagesync`): pages of one channel's log
 * above the caller's visibility floor, in ascending seq order.
 */
export class SyncService {
  constructor(
    private readonly store: Pick<Store, 'channels' | 'memberships' | 'messages' | 'events'>,
    /** Told of an unexpected failure of one item of a batch (the item answers only that it failed). */
    private readonly onItemError: (err: unknown) => void = () => {},
  ) {}

  async pull(req: SyncRequest): Promise<MessageSyncResult> {
    const { channelId, floor } = await this.access(req.loginUid, req.channelId, req.channelType);
    return this.page(req, channelId, floor);
  }

  /**
   * `/channel/messagesyncbatch`: every item's access is checked first (one
   * refusal refuses the whole request); read errors are then per item.
   */
  async pullBatch(loginUid: string, items: Omit<SyncRequest, 'loginUid'>[]): Promise<MessageSyncBatchItem[]> {
    const checked: Array<{ channelId: string; floor: number }> = [];
    for (const item of items) checked.push(await this.access(loginUid, item.channelId, item.channelType));
    return Promise.all(
      items.map(async (item, i) => {
        const head = { channel_id: item.channelId, channel_type: item.channelType };
        try {
          return { ...head, ...(await this.page({ ...item, loginUid }, checked[i]!.channelId, checked[i]!.floor)) };
        } catch (err) {
          return {
            ...head,
            start_message_seq: item.startSeq,
            end_message_seq: item.endSeq,
            more: 0,
            messages: [],
            error: this.itemError(err),
          };
        }
      }),
    );
  }

  /** What a failed batch item says: a refusal's or a store failure's text, else only that it failed (logged here). */
  private itemError(err: unknown): string {
    const known = exposedError(err);
    if (known) return known.message;
    this.onItemError(err);
    return 'internal error';
  }

  /** The newest visible message seq of a channel for `loginUid` (0 when none). */
  async maxSeq(loginUid: string, channelId: string, channelType: number): Promise<number> {
    const a = await this.access(loginUid, channelId, channelType);
    const page = await this.store.messages.range(a.channelId, channelType, a.floor + 1, UNBOUNDED, 1, true);
    return page.messages[0]?.messageSeq ?? 0;
  }

  /** The newest visible message of a channel for `loginUid`. */
  async lastMessage(loginUid: string, channelId: string, channelType: number): Promise<MessageResp | undefined> {
    const a = await this.access(loginUid, channelId, channelType);
    const m = (await this.store.messages.range(a.channelId, channelType, a.floor + 1, UNBOUNDED, 1, true)).messages[0];
    return m ? toMessageResp(m, loginUid) : undefined;
  }

  /** `POST /messages`: exactly the selected messages the caller may see, in seq order. */
  async exact(q: ExactQuery): Promise<MessageResp[]> {
    const L = EXACT_QUERY_LIMITS;
    if (q.messageIds.length + q.messageSeqs.length + q.clientMsgNos.length > L.selectors) {
      throw rejected(`at most ${L.selectors} selectors per request`);
    }
    const a = await this.access(q.loginUid, q.channelId, q.channelType);
    const found = new Map<number, StoredMessage>();
    const add = (list: StoredMessage[]) => {
      for (const m of list) if (m.messageSeq > a.floor) found.set(m.messageSeq, m);
    };
    add(await this.store.messages.byIds(a.channelId, q.channelType, q.messageIds));
    add(await this.store.messages.bySeqs(a.channelId, q.channelType, q.messageSeqs));
    for (const no of q.clientMsgNos) {
      const hits = await this.store.messages.byClientMsgNo(a.channelId, q.channelType, no, L.entriesPerClientMsgNo + 1);
      if (hits.length > L.entriesPerClientMsgNo) {
        throw rejected(`client_msg_no ${JSON.stringify(no)} matches more than ${L.entriesPerClientMsgNo} index entries`);
      }
      add(hits);
    }
    if (found.size > L.results) throw rejected(`the selectors match more than ${L.results} messages`);
    let bytes = 0;
    for (const m of found.values()) bytes += m.payload.length;
    if (bytes > L.payloadBytes) throw rejected(`the selected payloads exceed ${L.payloadBytes} bytes`);
    return [...found.values()].sort((x, y) => x.messageSeq - y.messageSeq).map((m) => toMessageResp(m, q.loginUid));
  }

  /** Checks the caller may read the channel; returns its canonical id and visibility floor. */
  private async access(loginUid: string, requested: string, channelType: number): Promise<{ channelId: string; floor: number }> {
    let channelId = requested;
    if (channelType === ChannelType.Person) {
      const canonical = normalizePersonChannel(loginUid, channelId);
      if (!canonical) throw rejected('invalid channel_id');
      channelId = canonical;
    }
    const channel = await this.store.channels.get(channelId, channelType);
    if (channel?.disband === 1) throw rejected('internal/message: channel disbanded');
    // Person channels too: both participants become members with the first message (the person directory).
    const membership = await this.store.memberships.get(channelId, channelType, loginUid);
    if (membership && !membership.removed) return { channelId, floor: Math.max(membership.joinSeq - 1, membership.deletedToSeq) };
    // The built-in system uid's person channels keep no directory (they stay out of conversation lists), so its peer reads them whole.
    if (channelType === ChannelType.Person && personParticipants(channelId)?.includes(SYSTEM_UID)) return { channelId, floor: 0 };
    throw rejected('internal/message: valid channel membership required');
  }

  private async page(req: SyncRequest, channelId: string, floor: number): Promise<MessageSyncResult> {
    const minSeq = floor + 1;
    const limit = req.limit <= 0 ? DEFAULT_LIMIT : Math.min(req.limit, MAX_LIMIT);

    let lower: number;
    let upper: number;
    let newest: boolean;
    if (req.pullMode === 1) {
      lower = Math.max(req.startSeq, minSeq);
      upper = req.endSeq === 0 ? UNBOUNDED : req.endSeq - 1;
      newest = false;
    } else {
      lower = Math.max(minSeq, req.endSeq + 1);
      upper = req.startSeq === 0 ? UNBOUNDED : req.startSeq;
      newest = true;
    }
    const page = await this.store.messages.range(channelId, req.channelType, lower, upper, limit, newest);
    const messages = page.messages.map((m) => toMessageResp(m, req.loginUid));
    if (req.includeEventMeta) {
      const full = req.eventSummaryMode === 'full';
      for (let i = 0; i < messages.length; i++) {
        const m = page.messages[i]!;
        if (!(m.setting & SETTING_STREAM) || m.clientMsgNo === '') continue;
        const events = await this.store.events.list(channelId, req.channelType, m.clientMsgNo, 0, MAX_EVENTS_PER_MESSAGE);
        Object.assign(messages[i]!, summarizeEvents(m.clientMsgNo, events, full));
      }
    }
    return { start_message_seq: req.startSeq, end_message_seq: req.endSeq, more: page.more ? 1 : 0, messages };
  }
}
