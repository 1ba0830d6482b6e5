import {
  ChannelType,
  normalizePersonChannel,
  personParticipants,
  personPeer,
  type MessageResp,
  type MessageSyncResult,
} from '@parley/shared';
import type { Store } from '../store/store.ts';
import type { StoredMessage } from '../store/message.repository.ts';
import { FLAG_NO_PERSIST, FLAG_RED_DOT, FLAG_SYNC_ONCE } from './send.service.ts';

export interface SyncRequest {
  loginUid: string;
  channelId: string;
  channelType: number;
  startSeq: number;
  endSeq: number;
  limit: number;
  /** 0 = down (older), 1 = up (newer). */
  pullMode: number;
}

/** Why a pull was refused; the HTTP layer turns it into a 400. */
export class SyncRejected extends Error {}

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
  constructor(private readonly store: Store) {}

  async pull(req: SyncRequest): Promise<MessageSyncResult> {
    let channelId = req.channelId;
    if (req.channelType === ChannelType.Person) {
      const canonical = normalizePersonChannel(req.loginUid, channelId);
      if (!canonical) throw new SyncRejected('invalid channel_id');
      channelId = canonical;
    }
    const channel = await this.store.channels.get(channelId, req.channelType);
    if (channel?.disband === 1) throw new SyncRejected('internal/message: channel disbanded');
    const membership = await this.store.memberships.get(channelId, req.channelType, req.loginUid);
    const participant = req.channelType === ChannelType.Person && personParticipants(channelId)?.includes(req.loginUid);
    if ((!membership || membership.removed) && !participant) {
      throw new SyncRejected('internal/message: valid channel membership required');
    }
    const floor = membership ? Math.max(membership.joinSeq - 1, membership.deletedToSeq) : 0;
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
    return {
      start_message_seq: req.startSeq,
      end_message_seq: req.endSeq,
      more: page.more ? 1 : 0,
      messages: page.messages.map((m) => toMessageResp(m, req.loginUid)),
    };
  }
}
