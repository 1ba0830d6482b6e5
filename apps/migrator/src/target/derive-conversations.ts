import { ChannelType, CMD_SUFFIX } from '@parley/shared';
import type { Row } from '@parley/store';
import { readJsonl } from '../archive/jsonl.ts';
import { missingIdentity, type Policy } from '../policy.ts';
import { recordPath } from '../stages/records-dir.ts';
import type { ConversationRecord } from '../v2/records.ts';
import { channelKey, type SeqMap } from './seq-map.ts';

/** A membership row being derived. `conversation`: a v2 chat conversation row backs it. */
export interface Membership extends Row<'memberships'> {
  conversation: boolean;
}

/** A command-log binding (`cmd_bindings`): v2 keeps a command conversation's sync position the same way. */
export type Binding = Omit<Row<'cmd_bindings'>, 'removed'>;

export interface ConversationContext {
  member(channelId: string, type: number, uid: string, updatedAt: number): Membership;
  members: Map<string, Membership>;
  seqs: SeqMap;
  /** Target tail per channel key. */
  tails: Map<string, number>;
  counts: Record<string, number>;
}

const ms = (ns: string) => Number(BigInt(ns) / 1_000_000n);

/** Whether a v2 conversation row is a command conversation (type 1; prepare blocks rows whose type and id disagree). */
export function isCmdConversation(c: Pick<ConversationRecord, 'type' | 'channel_id'>): boolean {
  return c.type === 1 || c.channel_id.endsWith(CMD_SUFFIX);
}

/**
 * Applies the archive's conversation rows to the memberships, as v2 shows
 * them: a command conversation (its sync position) becomes a command binding
 * acknowledged up to its read position, never a membership; a chat
 * conversation sets read/delete positions and is listed (activated) only
 * when v2 would list it: among the newest `conversation_list_limit` chat
 * conversations of its user (unless `preserve_all_conversations`), with a
 * retained message above its delete position. A live membership v2 keeps no conversation
 * for (a deleted conversation, a member who joined after the last message)
 * is hidden until a new message, unless `missing_conversations[]` keeps it
 * visible. Returns the bindings; counts go into `ctx.counts`.
 */
export function applyConversations(records: string, policy: Policy, ctx: ConversationContext): Binding[] {
  const bump = (k: string, n = 1) => (ctx.counts[k] = (ctx.counts[k] ?? 0) + n);
  const bindings: Binding[] = [];
  const listed = new Map<string, Array<{ m: Membership; updated: bigint }>>();
  for (const c of readJsonl<ConversationRecord>(recordPath(records, 'conversations'))) {
    const ck = channelKey(c.channel_id, c.channel_type);
    const updatedMs = ms(c.updated_at_ns) || ms(c.created_at_ns);
    if (isCmdConversation(c)) {
      bindings.push({
        uid: c.uid,
        channel_id: c.channel_id,
        channel_type: c.channel_type,
        start_seq: 1,
        ack_seq: ctx.seqs.position(ck, c.readed_to_msg_seq),
        updated_at: updatedMs,
      });
      continue;
    }
    const m = ctx.member(c.channel_id, c.channel_type, c.uid, ms(c.updated_at_ns));
    if (c.channel_type === ChannelType.Person) m.removed = 0;
    m.conversation = true;
    m.read_seq = ctx.seqs.position(ck, c.readed_to_msg_seq);
    m.deleted_to_seq = ctx.seqs.position(ck, c.deleted_at_msg_seq);
    if (policy.deriveUnread) {
      m.unread_count = 0;
      if (c.unread_count !== 0) bump('archived_unread');
    } else {
      m.unread_count = c.unread_count;
    }
    const tail = ctx.tails.get(ck) ?? 0;
    m.activated_at = tail > m.deleted_to_seq ? Math.max(1, updatedMs) : 0;
    let list = listed.get(c.uid);
    if (!list) listed.set(c.uid, (list = []));
    list.push({ m, updated: BigInt(c.updated_at_ns) });
  }
  for (const list of listed.values()) {
    if (list.length <= policy.listLimit || policy.preserveAll) continue;
    // v2 lists the newest by update time, rows without one last
    list.sort((a, b) => (a.updated === b.updated ? 0 : a.updated === 0n ? 1 : b.updated === 0n ? -1 : a.updated > b.updated ? -1 : 1));
    for (const { m } of list.slice(policy.listLimit)) {
      m.activated_at = 0;
      m.deleted_to_seq = Math.max(m.deleted_to_seq, ctx.tails.get(channelKey(m.channel_id, m.channel_type)) ?? 0);
      bump('beyond_list_limit');
    }
  }
  for (const m of ctx.members.values()) {
    if (m.conversation || m.removed !== 0 || m.channel_id.endsWith(CMD_SUFFIX)) continue;
    const tail = ctx.tails.get(channelKey(m.channel_id, m.channel_type)) ?? 0;
    if (tail <= m.deleted_to_seq) continue;
    const id = missingIdentity(m.uid, m.channel_id, m.channel_type, tail);
    const entry = policy.missing.get(`${id.uid_sha256} ${id.channel_sha256}`);
    if (entry && !entry.hidden) {
      bump('missing_conversations_visible');
      continue;
    }
    m.deleted_to_seq = tail;
    bump('hidden_memberships');
  }
  return bindings;
}
