import type {
  ConversationListBody,
  ConversationMutationBody,
  ConversationPage,
  ConversationRetryBody,
  ConversationSyncBody,
  ConversationSyncResult,
  StatusOk,
} from '@parley/shared';
import { invalid } from '../errors.ts';
import { MAX_PAGE, type ConversationService, type VisibleConversation } from '../messaging/conversation.service.ts';
import { knownKey, parseLastMsgSeqs } from '../messaging/last-msg-seqs.ts';
import type { SyncService } from '../messaging/sync.service.ts';

const ok: StatusOk = { status: 200 };
/** `/conversation/sync` entries when the body names no limit. */
const DEFAULT_SYNC_LIMIT = 200;

/** The conversation directory, its monotonic mutations and the deprecated v2-style sync. */
export function createConversationApi(conversations: ConversationService, sync: SyncService) {
  /** The conversation a mutation names; `uidText` is the empty-uid text of the operation. */
  const target = (b: ConversationMutationBody, uidText: string) => {
    const uid = (b.uid ?? '').trim();
    if (uid === '') throw invalid(uidText);
    const channelId = (b.channel_id ?? '').trim();
    if (channelId === '' || !b.channel_type) throw invalid('channel_id or channel_type cannot be empty');
    return { uid, channelId, channelType: b.channel_type };
  };
  /** `/conversations/{clearUnread,delete,activate}`: one change to one live conversation. */
  const mutation =
    (run: (uid: string, channelId: string, channelType: number) => Promise<void>) =>
    async (b: ConversationMutationBody): Promise<StatusOk> => {
      const t = target(b, 'uid cannot be empty');
      await run(t.uid, t.channelId, t.channelType);
      return ok;
    };

  return {
    /** `/conversation/list`: one page of candidates; echo `next_cursor` until `done`. */
    async list(b: ConversationListBody): Promise<ConversationPage> {
      const uid = b.uid.trim();
      if (uid === '') throw invalid('uid不能为空！');
      if ((b.limit ?? 0) > MAX_PAGE) throw invalid(`limit must be at most ${MAX_PAGE}`);
      if ((b.completed_coverage ?? 0) < 0) throw invalid('completed_coverage cannot be negative');
      return conversations.list(uid, b.cursor ?? '', b.limit ?? 0);
    },

    /** `/conversation/retry`: point reads of the given conversations. */
    async retry(b: ConversationRetryBody): Promise<ConversationPage> {
      const uid = b.uid.trim();
      if (uid === '' || b.channels.length === 0) throw invalid('uid或channels不能为空！');
      if (b.channels.some((c) => c.channel_id.trim() === '' || c.channel_type === 0)) throw invalid('channel_id或channel_type错误！');
      return conversations.retry(uid, b.channels);
    },

    clearUnread: mutation((uid, id, type) => conversations.clearUnread(uid, id, type)),
    delete: mutation((uid, id, type) => conversations.delete(uid, id, type)),
    activate: mutation((uid, id, type) => conversations.activate(uid, id, type)),

    /** Lowers unread to at most `unread` (it never raises unread). */
    async setUnread(b: ConversationMutationBody): Promise<StatusOk> {
      const t = target(b, 'UID cannot be empty');
      if ((b.unread ?? 0) < 0) throw invalid('unread cannot be negative');
      await conversations.setUnread(t.uid, t.channelId, t.channelType, b.unread ?? 0);
      return ok;
    },

    /**
     * `/conversation/sync` (deprecated): every visible conversation the client
     * does not already hold up to its newest message, newest first, with up to
     * `msg_count` recent messages above what it holds.
     */
    async sync(b: ConversationSyncBody): Promise<ConversationSyncResult> {
      const uid = b.uid.trim();
      if (uid === '') throw invalid('invalid request');
      const known = parseLastMsgSeqs(uid, b.last_msg_seqs ?? '');
      if (!known) throw invalid('invalid last_msg_seqs', 'invalid_last_msg_seqs');
      const exclude = new Set(b.exclude_channel_types ?? []);
      const limit = !b.limit ? DEFAULT_SYNC_LIMIT : b.limit;
      const all = await conversations.all(uid, Number.MAX_SAFE_INTEGER);
      // A conversation the client already holds up to its newest message is unchanged: left out.
      const held = (c: VisibleConversation) => known.get(knownKey(c.channelId, c.item.channel_type));
      const changed = (c: VisibleConversation) => (held(c) ?? -1) < (c.last?.messageSeq ?? 0);
      const picked = all
        .filter((c) => !exclude.has(c.item.channel_type) && (b.only_unread !== 1 || c.item.unread > 0) && changed(c))
        .slice(0, limit);
      const msgCount = b.msg_count ?? 0;
      return Promise.all(
        picked.map(async (c) => {
          const { item, last } = c;
          // Recents stop above the client's held seq: it has those already.
          const recents =
            msgCount > 0 && last
              ? (
                  await sync.pull({
                    loginUid: uid,
                    channelId: item.channel_id,
                    channelType: item.channel_type,
                    startSeq: 0,
                    endSeq: held(c) ?? 0,
                    limit: msgCount,
                    pullMode: 0,
                  })
                ).messages.reverse()
              : [];
          return {
            channel_id: item.channel_id,
            channel_type: item.channel_type,
            unread: item.unread,
            timestamp: last ? Math.floor(last.createdAt / 1000) : 0,
            last_msg_seq: last?.messageSeq ?? 0,
            last_client_msg_no: last?.clientMsgNo ?? '',
            offset_msg_seq: 0,
            readed_to_msg_seq: item.read_seq,
            version: last?.createdAt ?? 0,
            ...(recents.length > 0 ? { recents } : {}),
          };
        }),
      );
    },
  };
}

export type ConversationApi = ReturnType<typeof createConversationApi>;
