import type { Db } from '../db.ts';

export interface CmdBinding {
  channelId: string;
  channelType: number;
  startSeq: number;
  ackSeq: number;
}

const CHUNK = 500;

/** Bindings of uids to command logs, for offline command recovery. */
export function createCmdBindingRepository(db: Db) {
  return {
    /**
     * Binds each uid to the command log: a new or previously unbound binding
     * starts at `startSeq`; a live binding is left unchanged.
     */
    async bind(uids: readonly string[], channelId: string, channelType: number, startSeq: number): Promise<void> {
      const now = Date.now();
      for (let i = 0; i < uids.length; i += CHUNK) {
        await db
          .insertInto('cmd_bindings')
          .values(
            uids
              .slice(i, i + CHUNK)
              .map((uid) => ({ uid, channel_id: channelId, channel_type: channelType, start_seq: startSeq, updated_at: now })),
          )
          .onConflict((oc) =>
            oc
              .columns(['uid', 'channel_id', 'channel_type'])
              .doUpdateSet({ start_seq: startSeq, ack_seq: 0, removed: 0, updated_at: now })
              .where('cmd_bindings.removed', '=', 1),
          )
          .execute();
      }
    },

    async unbind(uids: readonly string[], channelId: string, channelType: number): Promise<void> {
      for (let i = 0; i < uids.length; i += CHUNK) {
        await db
          .updateTable('cmd_bindings')
          .set({ removed: 1, updated_at: Date.now() })
          .where('channel_id', '=', channelId)
          .where('channel_type', '=', channelType)
          .where('uid', 'in', uids.slice(i, i + CHUNK))
          .execute();
      }
    },

    async listLive(uid: string, max: number): Promise<CmdBinding[]> {
      const rows = await db
        .selectFrom('cmd_bindings')
        .select(['channel_id', 'channel_type', 'start_seq', 'ack_seq'])
        .where('uid', '=', uid)
        .where('removed', '=', 0)
        .orderBy('channel_id')
        .orderBy('channel_type')
        .limit(max)
        .execute();
      return rows.map((r) => ({
        channelId: r.channel_id,
        channelType: Number(r.channel_type),
        startSeq: Number(r.start_seq),
        ackSeq: Number(r.ack_seq),
      }));
    },

    /** Raises the acknowledged seq of a live binding (never lowers it). */
    async ack(uid: string, channelId: string, channelType: number, seq: number): Promise<void> {
      await db
        .updateTable('cmd_bindings')
        .set({ ack_seq: seq, updated_at: Date.now() })
        .where('uid', '=', uid)
        .where('channel_id', '=', channelId)
        .where('channel_type', '=', channelType)
        .where('ack_seq', '<', seq)
        .execute();
    },
  };
}

export type CmdBindingRepository = ReturnType<typeof createCmdBindingRepository>;
