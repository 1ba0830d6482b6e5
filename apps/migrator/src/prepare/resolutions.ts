import type { Plan } from '@parley/shared';
import { V2_LIST_LIMIT } from '../policy.ts';
import type { Finding, PatchOp, Resolution } from './findings.ts';
import { PatchBuilder } from './patch.ts';

type Make = (f: Finding, b: PatchBuilder) => Resolution;
type Bound = { node_id: number; shard: number; key: string; sha256?: string };

/** A `quarantine[]` entry for the row a finding names (`evidence.quarantine`, its digest filled in after the scan). */
function quarantine(b: PatchBuilder, f: Finding, reason: string): PatchOp[] {
  const q = f.evidence!.quarantine as Bound;
  return b.append(['quarantine'], { node_id: q.node_id, shard: q.shard, key: q.key, sha256: q.sha256, reason });
}

const compact = (b: PatchBuilder) => b.set(['messages', 'compact_sequences'], true);

/** Deduplication: keep the newest row (a chain with proof records), renumbering the channel. */
const dedupe: Make = (f, b) => {
  const chain = f.evidence?.chain === true;
  return {
    patch: [
      ...b.set(['messages', 'keep_latest_duplicates'], true),
      ...(chain ? b.set(['messages', 'resolve_duplicate_chains'], true) : []),
      ...compact(b),
    ],
    sentence: `Keeps the newest of the duplicate rows (seq ${String((f.evidence?.seqs as number[] | undefined)?.at(-1) ?? f.message_seq)}) and archives the others${chain ? ' with chain proof records' : ''}; the channel is renumbered 1..N and the mapping kept.`,
  };
};

/** What resolves each finding code, given its evidence. */
const MAKERS: Record<string, Make> = {
  missing_conversation: (f, b) => ({
    patch: b.append(['metadata', 'missing_conversations'], {
      capture_digest: f.evidence!.capture_digest,
      uid_sha256: f.evidence!.uid_sha256,
      channel_sha256: f.evidence!.channel_sha256,
      retained_tail: f.evidence!.retained_tail,
    }),
    sentence:
      'Keeps this membership visible with its whole history pullable, unlike v2 (which shows no conversation); add "visibility": "hidden_until_new_message" to keep the default instead.',
  }),
  duplicate_client_msg_no: dedupe,
  duplicate_message_id: (f, b) => {
    if (!f.evidence?.clash) return dedupe(f, b);
    return {
      patch: [...quarantine(b, f, 'message_id_clash'), ...compact(b)],
      sentence: `Quarantines the later of the two rows using message id ${String(f.evidence.message_id)} (Parley's message_id_clash reason): it stays complete in the archive, its channel is renumbered.`,
    };
  },
  invalid_message_channel: (f, b) => ({
    patch: [...quarantine(b, f, 'invalid_message_channel'), ...compact(b)],
    sentence:
      'Quarantines the message stored under a hash that is not its channel\'s (an "&" in the channel id): it stays complete in the archive, its channel is renumbered.',
  }),
  unresolved_allowlist_channel: (f, b) => ({
    patch: quarantine(b, f, 'unresolved_allowlist_channel'),
    sentence:
      'Quarantines the allowlist row whose channel no row names (v2 applied it to a channel known only by its hash): it stays in the archive, the target has no such list entry.',
  }),
  inconsistent_cmd_conversation: (f, b) => ({
    patch: [...b.set(['messages', 'exclude_cmd'], true), ...quarantine(b, f, 'inconsistent_cmd_conversation')],
    sentence:
      'Leaves command conversations out (exclude_cmd) and quarantines this row, whose type and channel id disagree; both stay in the archive.',
  }),
  duplicate_conversation: (f, b) => {
    const r = f.evidence?.recovery as Record<string, unknown> | undefined;
    if (!r)
      return {
        patch: [],
        sentence: "v2's unique index points at none of these rows: no recovery entry can name the original; the source must be repaired.",
      };
    return {
      patch: b.append(['metadata', 'conversation_recoveries'], r),
      sentence: "Keeps the row v2's unique index points at (the conversation v2 served) and archives the others.",
    };
  },
  conversation_list_limit: (_f, b) => ({
    patch: b.set(['metadata', 'conversation_list_limit'], V2_LIST_LIMIT),
    sentence: `Conversations beyond the list limit are hidden until a new message, as v2 hid them; ${V2_LIST_LIMIT} is v2's default: put the deployment's conversation.userMaxCount (or add preserve_all_conversations to keep them all visible).`,
  }),
  sequence_gap: (_f, b) => ({
    patch: compact(b),
    sentence: "Renumbers the channel's retained messages 1..N; read and delete positions follow the mapping, which is kept.",
  }),
  legacy_stream_storage: (_f, b) => ({
    patch: b.set(['exclusions', 'legacy_stream_storage'], true),
    sentence: 'Archives the legacy stream and stream-meta tables (written by v2.2.3 and older, read by nothing since) instead of blocking.',
  }),
  legacy_stream_v2: (_f, b) => ({
    patch: b.set(['messages', 'exclude_streams'], true),
    sentence: 'Leaves stream data out (exclude_streams): the legacy StreamV2 rows and every stream message stay in the archive only.',
  }),
  duplicate_chain_rejected: () => ({
    patch: [],
    sentence: 'The duplicates do not form one chain with one sender; no policy may choose among them: the source must be checked.',
  }),
  duplicate_endpoint_excluded: () => ({
    patch: [],
    sentence:
      'The newest duplicate is a stream message exclude_streams leaves out; drop exclude_streams or resolve the duplicates in the source.',
  }),
  stream_identity_shared: () => ({
    patch: [],
    sentence: 'A carried message shares its client message number with a stream message left out; drop exclude_streams for this data.',
  }),
};

/** For codes without a plan member that resolves them. */
const NONE: Resolution = {
  patch: [],
  sentence: 'No plan member resolves this: the source must be checked (and repaired or re-collected) or a newer release used.',
};

/**
 * Gives every blocker (and every warning a plan member can change) its
 * resolution, cumulatively: blockers first, then warnings. Returns the
 * blockers' patches concatenated.
 */
export function attachResolutions(plan: Plan, blockers: Finding[], warnings: Finding[]): PatchOp[] {
  const b = new PatchBuilder(plan);
  const all: PatchOp[] = [];
  for (const f of blockers) {
    const make = MAKERS[f.code];
    f.resolution ??= make ? make(f, b) : NONE;
    all.push(...f.resolution.patch);
  }
  for (const f of warnings) {
    const make = MAKERS[f.code];
    if (make && f.evidence && f.evidence.hidden !== false) f.resolution ??= make(f, b);
  }
  return all;
}
