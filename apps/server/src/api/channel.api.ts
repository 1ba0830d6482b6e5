import {
  ChannelType,
  type ChannelBody,
  type ChannelInfoBody,
  type ChannelKeyBody,
  type ChannelQuery,
  type MemberListBody,
  type StatusOk,
  type SubscriberBody,
  type TmpSubscriberBody,
  type WhitelistEntry,
} from '@parley/shared';
import type { ChannelFlags, MemberListName } from '@parley/store';
import { invalid } from '../errors.ts';
import type { ChannelService } from '../messaging/channel.service.ts';
import { requireChannelId, requireUids } from './validate.ts';

const ok: StatusOk = { status: 200 };

/** The info flags a body sets (`1` = on, any other value = off; absent = unchanged). `disband` only ever turns on. */
function flagsOf(b: ChannelInfoBody): Partial<ChannelFlags> {
  const bit = (v: number | undefined) => (v === undefined ? undefined : v === 1 ? 1 : 0);
  return {
    ban: bit(b.ban),
    disband: b.disband === 1 ? 1 : undefined,
    large: bit(b.large),
    sendBan: bit(b.send_ban),
    allowStranger: bit(b.allow_stranger),
  };
}

/** A channel type query value: 1-3 digits, else 0. */
export const queryChannelType = (raw: string | undefined): number => (/^\d{1,3}$/.test(raw ?? '') ? Number(raw) : 0);

/** Channel metadata, subscribers and the allow/deny lists, as the business API takes them. */
export function createChannelApi(channels: ChannelService) {
  /** A list operation's channel: for the allowlist a checked id, for the denylist a trimmed one. */
  const listKey = (list: MemberListName, b: { channel_id: string; channel_type?: number }) => {
    const channelId = list === 'allow' ? requireChannelId(b.channel_id, 'channel_id不能为空！') : b.channel_id.trim();
    if (channelId === '') throw invalid('channel_id不能为空！');
    if (!b.channel_type) throw invalid('频道类型不能为0！');
    return { channelId, channelType: b.channel_type };
  };

  return {
    /** `/channel`: creates or updates a channel, optionally resetting and adding subscribers. */
    async upsert(b: ChannelBody): Promise<StatusOk> {
      const channelId = requireChannelId(b.channel_id);
      if (b.channel_type === 0) throw invalid('频道类型错误！');
      if (b.channel_type === ChannelType.Person && b.subscribers && b.subscribers.length > 0) {
        throw invalid('不支持个人频道添加订阅者！');
      }
      const subscribers = b.subscribers && b.subscribers.length > 0 ? requireUids(b.subscribers) : [];
      await channels.upsert(channelId, b.channel_type, flagsOf(b));
      if (b.reset === 1) await channels.removeAllSubscribers(channelId, b.channel_type);
      if (subscribers.length > 0) await channels.addSubscribers(channelId, b.channel_type, subscribers);
      return ok;
    },

    /** `/channel/subscriber_add`: a missing channel is created (type 0 means group). */
    async addSubscribers(b: SubscriberBody): Promise<StatusOk> {
      const channelId = requireChannelId(b.channel_id);
      const channelType = b.channel_type === undefined || b.channel_type === 0 ? ChannelType.Group : b.channel_type;
      if (channelType === ChannelType.Person) throw invalid('个人频道不支持添加订阅者！');
      if (b.temp_subscriber === 1) throw invalid('新版本临时订阅者已不支持！');
      const uids = requireUids(b.subscribers);
      if (!(await channels.exists(channelId, channelType))) await channels.upsert(channelId, channelType, {});
      if (b.reset === 1) await channels.removeAllSubscribers(channelId, channelType);
      await channels.addSubscribers(channelId, channelType, uids);
      return ok;
    },

    async removeSubscribers(b: SubscriberBody): Promise<StatusOk> {
      const channelId = requireChannelId(b.channel_id);
      if (!b.channel_type) throw invalid('频道类型错误！');
      if (b.channel_type === ChannelType.Person) throw invalid('个人频道不支持添加订阅者！');
      await channels.removeSubscribers(channelId, b.channel_type, requireUids(b.subscribers));
      return ok;
    },

    /** `/channel/info`: deprecated and, as in WuKongIM, unvalidated: the row is upserted exactly as given. */
    async info(b: ChannelInfoBody): Promise<StatusOk> {
      await channels.upsert(b.channel_id ?? '', b.channel_type ?? 0, flagsOf(b));
      return ok;
    },

    /** `/channel/delete`: disbands an existing channel. */
    async disband(b: ChannelKeyBody): Promise<StatusOk> {
      const channelId = requireChannelId(b.channel_id);
      if (!b.channel_type) throw invalid('频道类型错误！');
      if (b.channel_type === ChannelType.Person) throw invalid('个人频道不支持添加订阅者！');
      if (!(await channels.exists(channelId, b.channel_type))) throw invalid('channel not found', 'channel_not_found');
      await channels.upsert(channelId, b.channel_type, { disband: 1 });
      return ok;
    },

    async removeAllSubscribers(b: ChannelKeyBody): Promise<StatusOk> {
      const channelId = requireChannelId(b.channel_id);
      if (!b.channel_type) throw invalid('频道类型错误！');
      if (b.channel_type === ChannelType.Person) throw invalid('个人频道不支持此操作！');
      await channels.removeAllSubscribers(channelId, b.channel_type);
      return ok;
    },

    /** `/tmpchannel/subscriber_set`: the temp channel's members become exactly these uids. */
    async setTempSubscribers(b: TmpSubscriberBody): Promise<StatusOk> {
      const channelId = requireChannelId(b.channel_id);
      const uids = requireUids(b.uids, 'uids不能为空！');
      await channels.clearList(channelId, ChannelType.Temp, 'temp');
      await channels.addToList(channelId, ChannelType.Temp, 'temp', uids);
      return ok;
    },

    /** `/channel/{blacklist,whitelist}_add`; for a person, the receiver's uid and type 1. */
    async listAdd(list: MemberListName, b: MemberListBody): Promise<StatusOk> {
      const { channelId, channelType } = listKey(list, b);
      await channels.addToList(channelId, channelType, list, requireUids(b.uids, 'uids不能为空！'));
      return ok;
    },

    async listRemove(list: MemberListName, b: MemberListBody): Promise<StatusOk> {
      const { channelId, channelType } = listKey(list, b);
      await channels.removeFromList(channelId, channelType, list, requireUids(b.uids, 'uids不能为空！'));
      return ok;
    },

    async listRemoveAll(list: MemberListName, b: ChannelKeyBody): Promise<StatusOk> {
      const { channelId, channelType } = listKey(list, b);
      await channels.clearList(channelId, channelType, list);
      return ok;
    },

    /** `*_set`: the list becomes exactly these uids (none = empty). */
    async listSet(list: MemberListName, b: MemberListBody): Promise<StatusOk> {
      const channelId = b.channel_id.trim();
      if (channelId === '') throw invalid('频道ID不能为空！');
      const uids = (b.uids ?? []).map((u) => u.trim()).filter((u) => u !== '');
      await channels.clearList(channelId, b.channel_type ?? 0, list);
      if (uids.length > 0) await channels.addToList(channelId, b.channel_type ?? 0, list, uids);
      return ok;
    },

    /** `GET /channel/whitelist`. */
    async whitelist(q: ChannelQuery): Promise<WhitelistEntry[]> {
      const channelId = (q.channel_id ?? '').trim();
      if (channelId === '') throw invalid('channel_id不能为空！');
      return (await channels.listMembers(channelId, queryChannelType(q.channel_type), 'allow')).map((uid) => ({ id: 0, uid }));
    },
  };
}

export type ChannelApi = ReturnType<typeof createChannelApi>;
