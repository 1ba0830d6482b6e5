import { sql } from 'kysely';
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
  /**
   * One channel's row (kind `channel`, no uid) and its deny and allow entries (kind the list's
   * name, each with its uid) as the rows of one statement: what the send path reads for every
   * channel it meets for the first time.
   */
  const stateOf = compiledOnce(
    (channelId: string, channelType: number, listChannelId: string, listChannelType: number, deny: MemberListName, allow: MemberListName) =>
      db
        .selectFrom('channels')
        .select([
          sql<string>`'channel'`.as('kind'),
          sql<string | null>`cast(null as text)`.as('uid'),
          'ban',
          'disband',
          'large',
          'send_ban',
          'allow_stranger',
        ])
        .where('channel_id', '=', channelId)
        .where('channel_type', '=', channelType)
        .unionAll(
          db
            .selectFrom('member_lists')
            .select([
              'list as kind',
              'uid',
              sql<number>`cast(null as integer)`.as('ban'),
              sql<number>`cast(null as integer)`.as('disband'),
              sql<number>`cast(null as integer)`.as('large'),
              sql<number>`cast(null as integer)`.as('send_ban'),
              sql<number>`cast(null as integer)`.as('allow_stranger'),
            ])
            .where('channel_id', '=', listChannelId)
            .where('channel_type', '=', listChannelType)
            .where('list', 'in', [deny, allow]),
        ),
    [
      '\u0000channel_id',
      -0x7fff_fff7,
      '\u0000list_channel_id',
      -0x7fff_fff8,
      '\u0000deny' as MemberListName,
      '\u0000allow' as MemberListName,
    ] as const,
  );
  const rowOf = (
    channelId: string,
    channelType: number,
    r: { ban: unknown; disband: unknown; large: unknown; send_ban: unknown; allow_stranger: unknown },
  ): ChannelRow => ({
    channelId,
    channelType,
    ban: Number(r.ban),
    disband: Number(r.disband),
    large: Number(r.large),
    sendBan: Number(r.send_ban),
    allowStranger: Number(r.allow_stranger),
  });
  return {
    async get(channelId: string, channelType: number): Promise<ChannelRow | undefined> {
      const row = (await db.executeQuery(byKey(channelId, channelType))).rows[0];
      if (!row) return undefined;
      return rowOf(row.channel_id, Number(row.channel_type), row);
    },

    /**
     * A channel's row (undefined when it has none) and its deny and allow lists, in one statement:
     * what a send's permission check reads when the channel is not cached (one round trip where
     * `get` and the two lists would take two or three). The lists are in no particular order.
     */
    async permissionState(
      channelId: string,
      channelType: number,
    ): Promise<{ row: ChannelRow | undefined; deny: string[]; allow: string[] }> {
      const rows = (await db.executeQuery(stateOf(channelId, channelType, channelId, channelType, 'deny', 'allow'))).rows;
      let row: ChannelRow | undefined;
      const deny: string[] = [];
      const allow: string[] = [];
      for (const r of rows) {
        if (r.kind === 'channel') row = rowOf(channelId, channelType, r);
        else if (r.kind === 'deny') deny.push(r.uid!);
        else allow.push(r.uid!);
      }
      return { row, deny, allow };
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
