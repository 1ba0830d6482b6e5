import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { CMD_SUFFIX, type Plan } from '@parley/shared';
import type { JsonlWriter } from '../archive/jsonl.ts';
import { writeConversationLine } from '../archive/record-json.ts';
import type { Policy } from '../policy.ts';
import { channelHash, stringShard } from '../v2/hash.ts';
import type { ConversationRecord, ExcludedRecord } from '../v2/records.ts';
import type { RawConversation } from '../v2/scan-shard.ts';
import type { Collector, Located } from './collector.ts';
import { ConversationKeys } from './conversation-keys.ts';
import type { Quarantine } from './quarantine.ts';
import { aggregateKey, type RowReader } from './raw-row.ts';

/** What the conversation rules need besides the collector. */
export interface ConversationContext {
  plan: Plan;
  policy: Policy;
  quarantine: Quarantine;
  reader: RowReader;
  /** Shards per source node (the unique index lives in the uid's shard). */
  shardCounts: Map<number, number>;
  out: JsonlWriter;
  excluded: JsonlWriter;
}

type Row = Located<RawConversation>;

const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');
const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/** The logical key of a conversation in `metadata.conversation_recoveries[]`: the JSON array `[uid, channel_type, v2 channel id]`. */
export function logicalKey(uid: string, channelType: number, channelId: string): string {
  return JSON.stringify([uid, channelType, channelId]);
}

/**
 * Writes the conversation records, applying the plan: quarantined rows and
 * (`exclude_cmd`) command conversations go to the excluded records; a row
 * whose type and channel id disagree about being a command conversation
 * blocks; several rows for one (uid, channel) block unless a
 * `conversation_recoveries[]` entry names the group and the row v2's unique
 * index points at; more chat conversations per user than v2's list limit
 * block unless `conversation_list_limit` says what the limit was. Returns
 * problems with the plan's entries (the run stops on any) and counts.
 */
export function writeConversations(c: Collector, ctx: ConversationContext): { problems: string[]; archivedUnread: number } {
  const f = c.findings;
  const keys = new ConversationKeys();
  const groups = new Map<string, Row[]>();
  for (const cv of c.conversations) {
    const q = ctx.quarantine.conversation(cv.node_id, cv.shard, cv.uid, cv.v2_id);
    if (q) {
      exclude(c, ctx, `quarantine:${q.reason}`, cv, q.key, q.sha256);
      continue;
    }
    const cmd = cv.channel_id.endsWith(CMD_SUFFIX);
    if ((cv.type === 1) !== cmd) {
      const key = b64(aggregateKey.conversation(cv.uid, cv.v2_id));
      f.block({
        code: 'inconsistent_cmd_conversation',
        detail: `conversation ${cv.v2_id} has type ${cv.type} but its channel id ${cmd ? 'is' : 'is not'} a command channel`,
        node_id: cv.node_id,
        shard: cv.shard,
        uid: cv.uid,
        channel_id: cv.channel_id,
        channel_type: cv.channel_type,
        key,
        evidence: { quarantine: { node_id: cv.node_id, shard: cv.shard, key } },
      });
      continue;
    }
    if (cmd && ctx.policy.excludeCmd) {
      exclude(c, ctx, 'exclude_cmd', cv);
      continue;
    }
    const id = c.v3(cv.channel_id, cv.channel_type, { shard: cv.shard, uid: cv.uid });
    if (id === undefined) continue;
    const prior = keys.addOrGet(cv.uid, cv.channel_type, id, cv.v2_id);
    const g = prior === undefined ? `${cv.uid}\u0000${cv.v2_id}` : `${cv.uid}\u0000${prior}`;
    groups.set(g, [...(groups.get(g) ?? []), cv]);
  }

  const problems: string[] = [];
  const recoveries = new Map(
    (ctx.plan.metadata?.conversation_recoveries ?? []).map((e, i) => [`${e.node_id} ${e.logical_key}`, { ...e, index: i, used: false }]),
  );
  const chatCount = new Map<string, number>();
  let archivedUnread = 0;
  for (const rows of groups.values()) {
    let keep = rows[0]!;
    if (rows.length > 1) {
      const lk = logicalKey(keep.uid, keep.channel_type, keep.channel_id);
      const shas = rows.map((r) => ctx.reader.row(r.node_id, r.shard, aggregateKey.conversation(r.uid, r.v2_id))?.sha256 ?? '');
      const rowsSha = sha([...shas].sort().join('\n'));
      const indexed = ctx.reader
        .db(keep.node_id, stringShard(keep.uid, ctx.shardCounts.get(keep.node_id) ?? 1))
        ?.get(aggregateKey.conversationIndex(keep.uid, channelHash(keep.channel_id, keep.channel_type)));
      const indexedId = indexed && indexed.length >= 8 ? Buffer.from(indexed).readBigUInt64BE(0).toString() : undefined;
      const indexedAt = rows.findIndex((r) => r.v2_id === indexedId);
      const entry = recoveries.get(`${keep.node_id} ${lk}`);
      if (!entry) {
        f.block({
          code: 'duplicate_conversation',
          detail: `conversation rows ${rows.map((r) => r.v2_id).join(', ')} for one (uid, channel); v2's unique index points at ${indexedAt >= 0 ? rows[indexedAt]!.v2_id : 'none of them'}`,
          node_id: keep.node_id,
          shard: keep.shard,
          uid: keep.uid,
          channel_id: keep.channel_id,
          channel_type: keep.channel_type,
          evidence: {
            recovery:
              indexedAt >= 0
                ? { node_id: keep.node_id, logical_key: lk, indexed_sha256: shas[indexedAt], rows_sha256: rowsSha }
                : undefined,
          },
        });
        continue;
      }
      entry.used = true;
      const at = `plan.metadata.conversation_recoveries[${entry.index}]`;
      if (entry.rows_sha256 !== rowsSha) {
        problems.push(`${at}.rows_sha256: the group's rows hash to ${rowsSha} (they changed)`);
        continue;
      }
      if (indexedAt < 0 || shas[indexedAt] !== entry.indexed_sha256) {
        problems.push(`${at}.indexed_sha256: not the row v2's unique index points at`);
        continue;
      }
      keep = rows[indexedAt]!;
      for (const [i, r] of rows.entries()) if (r !== keep) exclude(c, ctx, 'conversation_recoveries', r, undefined, shas[i]);
    }
    if (keep.type === 0) {
      chatCount.set(keep.uid, (chatCount.get(keep.uid) ?? 0) + 1);
      if (ctx.policy.deriveUnread && keep.unread_count !== 0) archivedUnread++;
    }
    writeConversationLine(ctx.out, record(c, keep));
    ctx.out.endLine();
  }
  for (const e of recoveries.values())
    if (!e.used)
      problems.push(
        `plan.metadata.conversation_recoveries[${e.index}]: binds to no group of duplicate conversation rows on node ${e.node_id}`,
      );
  if (!ctx.policy.listLimitGiven) {
    for (const [uid, n] of chatCount) {
      if (n > ctx.policy.listLimit) {
        f.block({
          code: 'conversation_list_limit',
          detail: `${n} chat conversations; v2 listed only the newest conversation.userMaxCount (default ${ctx.policy.listLimit}) and the plan does not say what it was`,
          uid,
          evidence: { count: n },
        });
      }
    }
  }
  return { problems, archivedUnread };
}

function record(c: Collector, cv: Row): ConversationRecord {
  return {
    node_id: cv.node_id,
    shard: cv.shard,
    v2_id: cv.v2_id,
    uid: cv.uid,
    type: cv.type,
    channel_id: c.v3(cv.channel_id, cv.channel_type, {}) ?? cv.channel_id,
    v2_channel_id: cv.channel_id,
    channel_type: cv.channel_type,
    unread_count: cv.unread_count,
    readed_to_msg_seq: cv.readed_to_msg_seq,
    deleted_at_msg_seq: cv.deleted_at_msg_seq,
    created_at_ns: cv.created_at_ns,
    updated_at_ns: cv.updated_at_ns,
  };
}

function exclude(c: Collector, ctx: ConversationContext, reason: string, cv: Row, key?: string, sha256?: string): void {
  c.excludedCounts[reason] = (c.excludedCounts[reason] ?? 0) + 1;
  const { node_id, shard, ...rest } = cv;
  const rec: ExcludedRecord = {
    kind: 'conversation',
    reason,
    node_id,
    shard,
    key: key ?? b64(aggregateKey.conversation(cv.uid, cv.v2_id)),
    ...(sha256 ? { sha256 } : {}),
    record: rest as unknown as Record<string, unknown>,
  };
  ctx.excluded.write(rec);
}
