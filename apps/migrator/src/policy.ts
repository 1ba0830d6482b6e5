import { createHash } from 'node:crypto';
import type { Plan } from '@parley/shared';

/**
 * The optional plan members (seed 001, "Optional plan members", "Message
 * policy rules") as the stages apply them. Every stage derives the same
 * policy from the plan alone; an absent member is the strict default.
 */
export interface Policy {
  /** `messages.keep_latest_duplicates`: of two duplicate rows in one channel, the newer (higher seq) is kept. */
  keepLatestDuplicates: boolean;
  /** `messages.resolve_duplicate_chains`: chains of three or more duplicates resolve to their last row, with proof records. */
  resolveDuplicateChains: boolean;
  /** `messages.compact_sequences`: retained messages are renumbered 1..N per channel; positions map to counts. */
  compactSequences: boolean;
  /** `messages.exclude_cmd`: command logs, their messages and command conversations stay in the archive only. */
  excludeCmd: boolean;
  /** `messages.exclude_streams`: stream messages (setting bit 0x02) and their event rows stay in the archive only. */
  excludeStreams: boolean;
  /** `exclusions.legacy_stream_storage`: the legacy stream and stream-meta tables (11 01, 12 01) are archived, not blocking. */
  excludeLegacyStreams: boolean;
  /** `metadata.derive_unread_from_boundaries`: targets carry no stored unread count; the originals are reported as `archived_unread`. */
  deriveUnread: boolean;
  /** `metadata.conversation_list_limit`, or v2's default 1000 when absent. */
  listLimit: number;
  /** Whether the list limit was given in the plan. */
  listLimitGiven: boolean;
  /** `metadata.preserve_all_conversations`: conversations beyond the list limit stay visible. */
  preserveAll: boolean;
  /** `metadata.missing_conversations[]`, by `uid_sha256 channel_sha256`. */
  missing: Map<string, MissingEntry>;
}

export interface MissingEntry {
  index: number;
  capture_digest: string;
  retained_tail: number;
  /** True with `visibility: hidden_until_new_message`; false keeps the membership visible. */
  hidden: boolean;
}

/** v2's `conversation.userMaxCount` default: the newest this many chat conversations are listed. */
export const V2_LIST_LIMIT = 1000;

export function policyOf(plan: Plan): Policy {
  const m = plan.messages ?? {};
  const md = plan.metadata ?? {};
  const missing = new Map<string, MissingEntry>();
  for (const [index, e] of (md.missing_conversations ?? []).entries()) {
    missing.set(`${e.uid_sha256} ${e.channel_sha256}`, {
      index,
      capture_digest: e.capture_digest,
      retained_tail: e.retained_tail,
      hidden: e.visibility === 'hidden_until_new_message',
    });
  }
  return {
    keepLatestDuplicates: m.keep_latest_duplicates === true,
    resolveDuplicateChains: m.resolve_duplicate_chains === true,
    compactSequences: m.compact_sequences === true,
    excludeCmd: m.exclude_cmd === true,
    excludeStreams: m.exclude_streams === true,
    excludeLegacyStreams: plan.exclusions?.legacy_stream_storage === true,
    deriveUnread: md.derive_unread_from_boundaries === true,
    listLimit: md.conversation_list_limit ?? V2_LIST_LIMIT,
    listLimitGiven: md.conversation_list_limit !== undefined,
    preserveAll: md.preserve_all_conversations === true,
    missing,
  };
}

const hex = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/**
 * The identity of a membership whose v2 conversation row is missing, as a
 * `metadata.missing_conversations[]` entry names it: SHA-256 of the uid, of
 * `<channel_type>:<channel_id>` (the Parley channel id) and of the capture
 * (the canonical JSON of uid, channel, type and retained tail).
 */
export function missingIdentity(
  uid: string,
  channelId: string,
  channelType: number,
  retainedTail: number,
): {
  uid_sha256: string;
  channel_sha256: string;
  capture_digest: string;
} {
  return {
    uid_sha256: hex(uid),
    channel_sha256: hex(`${channelType}:${channelId}`),
    capture_digest: hex(JSON.stringify({ channel_id: channelId, channel_type: channelType, retained_tail: retainedTail, uid })),
  };
}
