import {
  MAX_CMD_BIND_ITEMS,
  type CmdBindBody,
  type CmdSyncAckBody,
  type CmdSyncBody,
  type MessageResp,
  type StatusOk,
} from '@parley/shared';
import { DomainError, invalid } from '../errors.ts';
import type { CmdService } from '../messaging/cmd.service.ts';

const ok: StatusOk = { status: 200 };

/** The uids and command log a bind or unbind names (`uids`, else `subscribers`, else `uid`). */
function bindingOf(b: CmdBindBody) {
  const list =
    b.uids && b.uids.length > 0 ? b.uids : b.subscribers && b.subscribers.length > 0 ? b.subscribers : b.uid !== undefined ? [b.uid] : [];
  const uids = list.map((u) => u.trim());
  const channelId = (b.channel_id ?? '').trim();
  if (uids.length === 0 || uids.some((u) => u === '') || channelId === '' || !b.channel_type) {
    throw invalid('uid、channel_id和channel_type不能为空！');
  }
  if (uids.length > MAX_CMD_BIND_ITEMS) throw new DomainError('too_many_items', 400, `at most ${MAX_CMD_BIND_ITEMS} uids per batch`);
  return { uids, channelId, channelType: b.channel_type };
}

/** Command-message compatibility: bindings for offline recovery, sync and syncack. */
export function createCmdApi(cmd: CmdService) {
  return {
    async bind(b: CmdBindBody): Promise<StatusOk> {
      const x = bindingOf(b);
      await cmd.bind(x.uids, x.channelId, x.channelType);
      return ok;
    },

    async unbind(b: CmdBindBody): Promise<StatusOk> {
      const x = bindingOf(b);
      await cmd.unbind(x.uids, x.channelId, x.channelType);
      return ok;
    },

    async sync(b: CmdSyncBody): Promise<MessageResp[]> {
      const uid = (b.uid ?? '').trim();
      if (uid === '') throw invalid('uid不能为空！');
      if ((b.limit ?? 0) < 0) throw invalid('limit不能为负数！');
      return cmd.sync(uid, b.limit ?? 0);
    },

    async syncack(b: CmdSyncAckBody): Promise<StatusOk> {
      const uid = (b.uid ?? '').trim();
      if (uid === '') throw invalid('uid不能为空！');
      if (!b.last_message_seq) throw invalid('last_message_seq不能为空！');
      await cmd.syncack(uid);
      return ok;
    },
  };
}

export type CmdApi = ReturnType<typeof createCmdApi>;
