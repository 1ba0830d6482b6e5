/**
 * Business records decoded from v2 rows: the content of the archive's record
 * files. 64-bit integers (ids, nanosecond times) are decimal strings; seqs
 * and second/millisecond times are numbers. `node_id`/`shard` locate the row.
 */
import type { RawChannelInfo, RawDevice, RawUser } from './scan-shard.ts';

/** Where a row was read: v2 node and business-DB shard. */
export interface Location {
  node_id: number;
  shard: number;
}

/** A device row (credential). `token` is the v2 plaintext; only the archive holds it. */
export interface CredentialRecord extends Location, RawDevice {}

export interface UserRecord extends Location, RawUser {}

/** A channel-info row that names its channel (count-only rows are not channels). */
export interface ChannelRecord extends Location, Omit<RawChannelInfo, 'ch'> {}

/** A subscriber, allowlist or denylist row with its channel resolved from the key hash. */
export interface MemberRecord extends Location {
  list: 'subscriber' | 'allow' | 'deny';
  channel_id: string;
  channel_type: number;
  uid: string;
  created_at_ns: string;
  updated_at_ns: string;
}

export interface SystemUidRecord extends Location {
  uid: string;
}

/** A conversation row. `channel_id` is the v3 (canonical) id, `v2_channel_id` the stored one. */
export interface ConversationRecord extends Location {
  v2_id: string;
  uid: string;
  type: number;
  channel_id: string;
  v2_channel_id: string;
  channel_type: number;
  unread_count: number;
  readed_to_msg_seq: number;
  deleted_at_msg_seq: number;
  created_at_ns: string;
  updated_at_ns: string;
}

/** A message row, every column. `timestamp` is Unix seconds, `payload` Base64. */
export interface MessageRecord extends Location {
  channel_id: string;
  v2_channel_id: string;
  channel_type: number;
  message_seq: number;
  message_id: string;
  client_msg_no: string;
  from_uid: string;
  header: number;
  setting: number;
  expire: number;
  timestamp: number;
  topic: string;
  stream_no: string;
  term: string;
  payload: string;
}

/** A channel's log tail (the last-seq key) with what the archive holds of it. */
export interface TailRecord extends Location {
  channel_id: string;
  v2_channel_id: string;
  channel_type: number;
  last_seq: number;
  set_time_ns: string;
  /** Retained messages (rows at or below `last_seq`). */
  messages: number;
  /** Rows above `last_seq` that v2 never shows (clipped). */
  clipped: number;
}

/** A row kept only in the archive (plugins, message events, cluster configs, queues). Key and value Base64. */
export interface ArchivedRecord extends Location {
  kind: string;
  key: string;
  value: string;
}

/**
 * A row a policy or a quarantine entry leaves out of the target, kept
 * complete: `record` is the line its own file would have held (for an
 * unresolved list row, its raw fields with the channel hash `ch`).
 */
export interface ExcludedRecord extends Location {
  kind: 'message' | 'conversation' | 'member';
  /** The plan member that left it out (`exclude_cmd`, `keep_latest_duplicates`, ...) or `quarantine:<reason>`. */
  reason: string;
  /** Base64 of the row's aggregate key. */
  key: string;
  /** SHA-256 of the row's JSON, for rows a plan entry binds. */
  sha256?: string;
  record: Record<string, unknown>;
}

/** One line of `sequence_mapping`: a message row of a channel and its place in the target (`compact_sequences`). */
export interface MappingRecord {
  channel_id: string;
  channel_type: number;
  v2_channel_id: string;
  v2_seq: number;
  message_id: string;
  /** The target seq; 0 for a row left out. */
  target_seq: number;
  /** Retained messages at or before `v2_seq`: where a read or delete position at `v2_seq` lands. */
  boundary_seq: number;
}

/** One line of `duplicate_chain_proof`: a row a duplicate chain replaced, and how (`resolve_duplicate_chains`). */
export interface ChainProofRecord {
  channel_id: string;
  channel_type: number;
  v2_seq: number;
  message_id: string;
  client_msg_no: string;
  from_uid: string;
  /** The next row of the chain: it repeats this row's message id or its sender and client message number. */
  replaced_by_seq: number;
  relation: 'message_id' | 'client_msg_no' | 'message_id+client_msg_no';
  /** The chain's one retained row. */
  endpoint_seq: number;
  endpoint_message_id: string;
}

export { RECORD_FILES, type RecordFile } from '@parley/shared';
