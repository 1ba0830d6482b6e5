import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../db.ts';
import { StaleEpochError, type AppendFence } from '../errors.ts';
import type { EnsuredMember, LastSendMark } from '../repositories/membership.repository.ts';
import type { StoredMessage } from '../repositories/message.repository.ts';

/**
 * Most rows one statement carries (12 parameters each, with a mark of 4 and two memberships of 3 each:
 * under PostgreSQL's 65535); larger batches, or one with more than twice as many memberships, take the
 * transaction path.
 */
export const ONE_STATEMENT_ROWS = 2000;

const MESSAGE_COLUMNS = sql.raw(
  'channel_id, channel_type, message_seq, message_id, client_msg_no, from_uid, setting, flags, expire, topic, created_at, payload',
);

function messageValues(rows: readonly StoredMessage[]): RawBuilder<unknown> {
  return sql.join(
    rows.map(
      (m) =>
        sql`(cast(${m.channelId} as text), cast(${m.channelType} as integer), cast(${m.messageSeq} as bigint), cast(${m.messageId} as bigint),
          cast(${m.clientMsgNo} as text), cast(${m.fromUid} as text), cast(${m.setting} as integer), cast(${m.flags} as integer),
          cast(${m.expire} as bigint), cast(${m.topic} as text), cast(${m.createdAt} as bigint), cast(${m.payload} as bytea))`,
    ),
  );
}

/**
 * `appendBatch` on PostgreSQL in one statement, so in one round trip and its
 * own transaction: the lease rows of the fences are read `for share` (a
 * takeover waits for this statement; after one, the new epoch is seen), the
 * messages are inserted, `members` made sure of and the senders' last-send
 * marks raised only when every fence holds. A stale fence writes nothing and
 * rejects with `StaleEpochError`; a taken `(channel, seq)` fails the statement
 * (unique violation), writing nothing either.
 *
 * Every part of one statement reads the table as it was before the statement,
 * so the marks' update cannot see a membership the same statement creates: a
 * new membership takes its mark (if the batch has one for it) as it is
 * inserted, and the update raises those that existed.
 */
export async function appendInOneStatement(
  db: Db,
  rows: readonly StoredMessage[],
  marks: readonly LastSendMark[],
  fences: readonly AppendFence[],
  members: readonly EnsuredMember[] = [],
): Promise<void> {
  const fenced = fences.length > 0;
  const leases = fenced
    ? sql`f as (select slot, epoch from slot_leases where slot in (${sql.join(fences.map((x) => x.slot))}) for share),
        ok as (select (select count(*) from f where (slot, epoch) in (${sql.join(
          fences.map((x) => sql`(cast(${x.slot} as integer), cast(${x.epoch} as bigint))`),
        )})) = ${fences.length} as ok),`
    : sql``;
  const when = fenced ? sql`where (select ok from ok)` : sql`where true`;
  const markValues =
    marks.length > 0
      ? sql`mv(channel_id, channel_type, uid, seq) as (values ${sql.join(
          marks.map(
            (x) => sql`(cast(${x.channelId} as text), cast(${x.channelType} as integer), cast(${x.uid} as text), cast(${x.seq} as bigint))`,
          ),
        )}),`
      : sql``;
  const markUpdate =
    marks.length > 0
      ? sql`, m as (update memberships set last_send_seq = mv.seq from mv
          where memberships.channel_id = mv.channel_id and memberships.channel_type = mv.channel_type
            and memberships.uid = mv.uid and memberships.last_send_seq < mv.seq ${fenced ? sql`and (select ok from ok)` : sql``}
          returning 1)`
      : sql``;
  const markOfNew =
    marks.length > 0
      ? sql`coalesce((select mv.seq from mv where mv.channel_id = v.channel_id and mv.channel_type = v.channel_type and mv.uid = v.uid), 0)`
      : sql`cast(0 as bigint)`;
  const memberInsert =
    members.length > 0
      ? sql`, nm as (insert into memberships (channel_id, channel_type, uid, join_seq, last_send_seq, updated_at)
          select v.channel_id, v.channel_type, v.uid, 1, ${markOfNew}, cast(${Date.now()} as bigint)
          from (values ${sql.join(
            members.map((x) => sql`(cast(${x.channelId} as text), cast(${x.channelType} as integer), cast(${x.uid} as text))`),
          )}) as v(channel_id, channel_type, uid) ${when}
          on conflict do nothing returning 1)`
      : sql``;
  const result = await sql<{ ok: boolean; leases: Array<[number, number | string]> | null }>`with ${leases} ${markValues}
      ins as (insert into messages (${MESSAGE_COLUMNS}) select * from (values ${messageValues(rows)}) as v(${MESSAGE_COLUMNS}) ${when} returning 1)
      ${markUpdate}
      ${memberInsert}
    select ${fenced ? sql`(select ok from ok)` : sql`true`} as ok,
      ${fenced ? sql`(select json_agg(json_build_array(slot, epoch)) from f)` : sql`null`} as leases`.execute(db);
  const row = result.rows[0]!;
  if (row.ok) return;
  const current = new Map((row.leases ?? []).map(([slot, epoch]) => [Number(slot), Number(epoch)]));
  const stale = fences.find((x) => current.get(x.slot) !== x.epoch)!;
  throw new StaleEpochError(stale, current.get(stale.slot));
}
