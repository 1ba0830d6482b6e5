import { ChannelType, CMD_SUFFIX, personParticipants } from '@parley/shared';
import { readJsonl } from '../archive/jsonl.ts';
import { missingIdentity, type Policy } from '../policy.ts';
import { recordPath } from '../stages/records-dir.ts';
import type { ConversationRecord, MemberRecord, TailRecord } from '../v2/records.ts';

/** A live membership with retained messages whose v2 conversation row does not exist. */
export interface MissingConversation {
  uid: string;
  channel_id: string;
  channel_type: number;
  retained_tail: number;
  uid_sha256: string;
  channel_sha256: string;
  capture_digest: string;
  /** Whether the target hides it until a new message (the default; an entry without `visibility` keeps it visible). */
  hidden: boolean;
}

/**
 * The memberships v2 shows no conversation for (a conversation deleted with
 * DeleteConversation, a member who joined after the last message): live
 * subscribers and person-chat participants of channels with retained
 * messages that have no chat conversation row. Also checks that every
 * `metadata.missing_conversations[]` entry binds to one of them with the same
 * retained tail and capture digest; returns the problems.
 */
export function findMissingConversations(records: string, policy: Policy): { missing: MissingConversation[]; problems: string[] } {
  const key = (type: number, id: string, uid: string) => `${type}\u0000${id}\u0000${uid}`;
  const tails = new Map<string, number>();
  const live = new Map<string, { uid: string; channel_id: string; channel_type: number }>();
  for (const t of readJsonl<TailRecord>(recordPath(records, 'tails'))) {
    const tail = policy.compactSequences ? t.messages : t.last_seq;
    tails.set(`${t.channel_type}\u0000${t.channel_id}`, tail);
    if (t.channel_type === ChannelType.Person && !t.channel_id.endsWith(CMD_SUFFIX) && t.messages > 0) {
      for (const uid of personParticipants(t.channel_id) ?? [])
        live.set(key(t.channel_type, t.channel_id, uid), { uid, channel_id: t.channel_id, channel_type: t.channel_type });
    }
  }
  for (const m of readJsonl<MemberRecord>(recordPath(records, 'members'))) {
    if (m.list === 'subscriber')
      live.set(key(m.channel_type, m.channel_id, m.uid), { uid: m.uid, channel_id: m.channel_id, channel_type: m.channel_type });
  }
  for (const c of readJsonl<ConversationRecord>(recordPath(records, 'conversations'))) {
    if (c.type === 0 && !c.channel_id.endsWith(CMD_SUFFIX)) live.delete(key(c.channel_type, c.channel_id, c.uid));
  }
  const missing: MissingConversation[] = [];
  const bound = new Set<number>();
  const problems: string[] = [];
  for (const m of live.values()) {
    const tail = tails.get(`${m.channel_type}\u0000${m.channel_id}`) ?? 0;
    if (tail <= 0 || m.channel_id.endsWith(CMD_SUFFIX)) continue;
    const id = missingIdentity(m.uid, m.channel_id, m.channel_type, tail);
    const entry = policy.missing.get(`${id.uid_sha256} ${id.channel_sha256}`);
    if (entry) {
      bound.add(entry.index);
      if (entry.retained_tail !== tail)
        problems.push(
          `plan.metadata.missing_conversations[${entry.index}].retained_tail: ${entry.retained_tail}, but the retained tail is ${tail}`,
        );
      if (entry.capture_digest !== id.capture_digest)
        problems.push(
          `plan.metadata.missing_conversations[${entry.index}].capture_digest: differs from the capture (${id.capture_digest})`,
        );
    }
    missing.push({ ...m, retained_tail: tail, ...id, hidden: !entry || entry.hidden });
  }
  for (const e of policy.missing.values()) {
    if (!bound.has(e.index))
      problems.push(`plan.metadata.missing_conversations[${e.index}]: binds to no live membership without a conversation`);
  }
  missing.sort(
    (a, b) =>
      a.channel_type - b.channel_type ||
      (a.channel_id < b.channel_id ? -1 : a.channel_id > b.channel_id ? 1 : 0) ||
      (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0),
  );
  return { missing, problems };
}
