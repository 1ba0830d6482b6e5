import {
  MAX_MESSAGE_ID,
  type ChannelQuery,
  type ExactQueryBody,
  type ExactQueryResult,
  type LastMessageResult,
  type MaxMessageSeqResult,
  type MessageSyncBatchBody,
  type MessageSyncBatchResult,
  type MessageSyncBody,
  type MessageSyncResult,
} from '@parley/shared';
import { invalid } from '../errors.ts';
import type { SyncRequest, SyncService } from '../messaging/sync.service.ts';
import { queryChannelType } from './channel.api.ts';

/** Most items one `/channel/messagesyncbatch` may carry. */
export const MAX_SYNC_BATCH = 200;

function checkItem(b: { channel_id: string; channel_type: number }): void {
  if (b.channel_id.trim() === '') throw invalid('channel_id不能为空！');
  if (b.channel_type === 0) throw invalid('channel_type不能为空！');
}

function loginUidOf(raw: string): string {
  const loginUid = raw.trim();
  if (loginUid === '') throw invalid('login_uid不能为空！');
  return loginUid;
}

/** One pull of a body or batch item, as the sync service takes it. */
function pullOf(b: Omit<MessageSyncBody, 'login_uid'>): Omit<SyncRequest, 'loginUid'> {
  return {
    channelId: b.channel_id.trim(),
    channelType: b.channel_type,
    startSeq: b.start_message_seq ?? 0,
    endSeq: b.end_message_seq ?? 0,
    limit: b.limit ?? 0,
    pullMode: b.pull_mode ?? 0,
    includeEventMeta: (b.include_event_meta ?? 0) !== 0,
    eventSummaryMode: b.event_summary_mode ?? '',
  };
}

/** The channel a `GET` query names, checked in WuKongIM's order. */
function channelQuery(q: ChannelQuery) {
  const loginUid = (q.login_uid ?? '').trim();
  const channelId = (q.channel_id ?? '').trim();
  const channelType = queryChannelType(q.channel_type);
  if (loginUid === '') throw invalid('login_uid不能为空！');
  if (channelId === '') throw invalid('channel_id不能为空！');
  if (channelType === 0 || channelType > 255) throw invalid('channel_type不能为空！');
  return { loginUid, channelId, channelType };
}

/** Channel message pulls: single, batch, tail probes and the exact query. */
export function createSyncApi(sync: SyncService) {
  return {
    async messageSync(b: MessageSyncBody): Promise<MessageSyncResult> {
      const loginUid = loginUidOf(b.login_uid);
      checkItem(b);
      return sync.pull({ loginUid, ...pullOf(b) });
    },

    async messageSyncBatch(b: MessageSyncBatchBody): Promise<MessageSyncBatchResult> {
      const loginUid = loginUidOf(b.login_uid);
      if (b.items.length === 0) throw invalid('internal/message: batch message sync items required');
      if (b.items.length > MAX_SYNC_BATCH) throw invalid(`internal/message: batch message sync exceeds ${MAX_SYNC_BATCH} items`);
      b.items.forEach(checkItem);
      return { items: await sync.pullBatch(loginUid, b.items.map(pullOf)) };
    },

    async maxMessageSeq(q: ChannelQuery): Promise<MaxMessageSeqResult> {
      const c = channelQuery(q);
      return { message_seq: await sync.maxSeq(c.loginUid, c.channelId, c.channelType) };
    },

    async lastMessage(q: ChannelQuery): Promise<LastMessageResult> {
      const c = channelQuery(q);
      return (await sync.lastMessage(c.loginUid, c.channelId, c.channelType)) ?? {};
    },

    /** `POST /messages`: exactly the selected messages (ids, seqs, client message numbers). */
    async exact(b: ExactQueryBody): Promise<ExactQueryResult> {
      const loginUid = loginUidOf(b.login_uid);
      checkItem(b);
      const messages = await sync.exact({
        loginUid,
        channelId: b.channel_id.trim(),
        channelType: b.channel_type,
        // An id past int64 selects nothing (no message has it); the store could not bind it.
        messageIds: (b.message_ids ?? []).map((id) => BigInt(id)).filter((id) => id <= MAX_MESSAGE_ID),
        messageSeqs: b.message_seqs ?? [],
        clientMsgNos: b.client_msg_nos ?? [],
      });
      return { start_message_seq: 0, end_message_seq: 0, more: 0, messages };
    },
  };
}

export type SyncApi = ReturnType<typeof createSyncApi>;
