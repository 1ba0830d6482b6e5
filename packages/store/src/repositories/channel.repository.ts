import type { Db } from '../db.ts';
import { compiledOnce } from './compiled-query.ts';

/** Channel flags; each 0 or 1. */
export interface ChannelFlags {
  ban: number;
  disband: number;
  large: number;
  sendBan: number;
  allowStranger: number;
}

export interface ChannelRow extends ChannelFlags {
  channelId: string;
  channelType: number;
}

export type MemberListName = 'allow' | 'deny' | 'temp';

/** Rows per statement when writing uid lists (stays under every dialect's parameter limit). */
const CHUNK = 500;

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

/** Channel metadata and the allow/deny/temp lists of each channel. */
export function createChannelRepository(db: Db) {
  /** One channel's row by key: every CONNECT's ban check and every channel-cache load run it. */
  const byKey = compiledOnce(
    (channelId: string, channelType: number) =>
      db
        .selectFrom('channels')
        .select(['channel_id', 'channel_type', 'ban', 'disband', 'large', 'send_ban', 'allow_stranger'])
        .where('channel_id', '=', channelId)
        .where('channel_type', '=', channelType),
    ['\u0000channel_id', -0x7fff_fff2] as const,
  );
  // Read with `get` for every channel the send path meets for the first time (its permission lists).
  const denyAndAllow = compiledOnce(
    (channelId: string, channelType: number, deny: MemberListName, allow: MemberListName) =>
      db
        .selectFrom('member_lists')
        .select(['list', 'uid'])
        .where('channel_id', '=', channelId)
        .where('channel_type', '=', channelType)
        .where('list', 'in', [deny, allow])
        .orderBy('uid'),
    ['\u0000channel_id', -0x7fff_fff6, '\u0000deny' as MemberListName, '\u0000allow' as MemberListName] as const,
  );
  return {
    async get(channelId: string, channelType: number): Promise<ChannelRow | undefined> {
      const row = (await db.executeQuery(byKey(channelId, channelType))).rows[0];
      if (!row) return undefined;
      return {
        channelId: row.channel_id,
        channelType: Number(row.channel_type),
        ban: Number(row.ban),
        disband: Number(row.disband),
        large: Number(row.large),
        sendBan: Number(row.send_ban),
        allowStranger: Number(row.allow_stranger),
      };
    },

    /**
     * Creates the channel or updates the given flags. `disband` is sticky:
     * once 1 it stays 1.
     */
    async upsert(channelId: string, channelType: number, flags: Partial<ChannelFlags>): Promise<void> {
      const now = Date.now();
      const set: Record<string, number> = { updated_at: now };
      if (flags.ban !== undefined) set.ban = flags.ban;
      if (flags.large !== undefined) set.large = flags.large;
      if (flags.sendBan !== undefined) set.send_ban = flags.sendBan;
      if (flags.allowStranger !== undefined) set.allow_stranger = flags.allowStranger;
      if (flags.disband === 1) set.disband = 1;
      await db
        .insertInto('channels')
        .values({
          channel_id: channelId,
          channel_type: channelType,
          ban: flags.ban ?? 0,
          disband: flags.disband === 1 ? 1 : 0,
          large: flags.large ?? 0,
          send_ban: flags.sendBan ?? 0,
          allow_stranger: flags.allowStranger ?? 0,
          created_at: now,
          updated_at: now,
        })
        .onConflict((oc) => oc.columns(['channel_id', 'channel_type']).doUpdateSet(set))
        .execute();
    },

    /** A channel's deny and allow lists, each sorted, in one statement: what a send's permission check reads. */
    async permissionLists(channelId: string, channelType: number): Promise<{ deny: string[]; allow: string[] }> {
      const rows = (await db.executeQuery(denyAndAllow(channelId, channelType, 'deny', 'allow'))).rows;
      const deny: string[] = [];
      const allow: string[] = [];
      for (const r of rows) (r.list === 'deny' ? deny : allow).push(r.uid);
      return { deny, allow };
    },

    async listMembers(channelId: string, channelType: number, list: MemberListName): Promise<string[]> {
      const rows = await db
        .selectFrom('member_lists')
        .select('uid')
        .where('channel_id', '=', channelId)
        .where('channel_type', '=', channelType)
        .where('list', '=', list)
        .orderBy('uid')
        .execute();
      return rows.map((r) => r.uid);
    },

    async addMembers(channelId: string, channelType: number, list: MemberListName, uids: readonly string[]): Promise<void> {
      for (const part of chunks(uids)) {
        await db
          .insertInto('member_lists')
          .values(part.map((uid) => ({ channel_id: channelId, channel_type: channelType, list, uid })))
          .onConflict((oc) => oc.doNothing())
          .execute();
      }
    },

    async removeMembers(channelId: string, channelType: number, list: MemberListName, uids: readonly string[]): Promise<void> {
      for (const part of chunks(uids)) {
        await db
          .deleteFrom('member_lists')
          .where('channel_id', '=', channelId)
          .where('channel_type', '=', channelType)
          .where('list', '=', list)
          .where('uid', 'in', part)
          .execute();
      }
    },

    async clearMembers(channelId: string, channelType: number, list: MemberListName): Promise<void> {
      await db
        .deleteFrom('member_lists')
        .where('channel_id', '=', channelId)
        .where('channel_type', '=', channelType)
        .where('list', '=', list)
        .execute();
    },

    async addSystemUids(uids: readonly string[]): Promise<void> {
      for (const part of chunks(uids)) {
        await db
          .insertInto('system_uids')
          .values(part.map((uid) => ({ uid })))
          .onConflict((oc) => oc.doNothing())
          .execute();
      }
    },

    async removeSystemUids(uids: readonly string[]): Promise<void> {
      for (const part of chunks(uids)) await db.deleteFrom('system_uids').where('uid', 'in', part).execute();
    },

    async listSystemUids(): Promise<string[]> {
      return (await db.selectFrom('system_uids').select('uid').orderBy('uid').execute()).map((r) => r.uid);
    },
  };
}

export type ChannelRepository = ReturnType<typeof createChannelRepository>;
