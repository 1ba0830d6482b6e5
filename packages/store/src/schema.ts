import type { Generated, Insertable, Selectable } from 'kysely';

/**
 * Table shapes. Message ids are 64-bit: they are written as bigint and read
 * back through `cast(message_id as text)`, never as a JS number. Times are
 * unix milliseconds.
 */
export interface Database {
  devices: DevicesTable;
  channels: ChannelsTable;
  memberships: MembershipsTable;
  member_lists: MemberListsTable;
  messages: MessagesTable;
  channel_log: ChannelLogTable;
  system_uids: { uid: string };
  cmd_bindings: CmdBindingsTable;
  message_events: MessageEventsTable;
  meta: { key: string; value: string };
  slot_leases: SlotLeasesTable;
  cluster_nodes: ClusterNodesTable;
}

/** A whole row of a table as read back (64-bit ids may come as decimal text), inferred from its table below. */
export type Row<T extends keyof Database> = Selectable<Database[T]>;
/** A row as written: columns with defaults may be left out. */
export type NewRow<T extends keyof Database> = Insertable<Database[T]>;

export interface DevicesTable {
  uid: string;
  device_flag: number;
  device_level: number;
  device_id: string;
  /** Lower-case hex SHA-256 of the token; '' when revoked. */
  token_sha256: string;
  updated_at: number;
}

export interface ChannelsTable {
  channel_id: string;
  channel_type: number;
  ban: number;
  disband: number;
  large: number;
  send_ban: number;
  allow_stranger: number;
  created_at: number;
  updated_at: number;
}

/** A user's membership of a channel: subscriber record and conversation state at once. */
export interface MembershipsTable {
  channel_id: string;
  channel_type: number;
  uid: string;
  /** First seq this member may see (committed tail + 1 at join). */
  join_seq: number;
  read_seq: Generated<number>;
  deleted_to_seq: Generated<number>;
  /** Explicit activation time (ms), 0 when not activated. */
  activated_at: Generated<number>;
  /** Seq of this user's latest ordinary send in the channel (counts as read). */
  last_send_seq: Generated<number>;
  /** 1 when the member was removed (a tombstone). */
  removed: Generated<number>;
  /** Unread count set explicitly (carried over from a v2 conversation); 0 otherwise. */
  unread_count: Generated<number>;
  updated_at: number;
}

export interface MemberListsTable {
  channel_id: string;
  channel_type: number;
  /** 'allow' | 'deny' | 'temp' */
  list: string;
  uid: string;
}

export interface MessagesTable {
  channel_id: string;
  channel_type: number;
  message_seq: number;
  message_id: bigint | string;
  client_msg_no: string;
  from_uid: string;
  setting: number;
  /** Header bits: 1 no_persist, 2 red_dot, 4 sync_once. */
  flags: number;
  expire: number;
  topic: string;
  created_at: number;
  payload: Uint8Array;
  /**
   * Embedded store (SQLite) only, absent on PostgreSQL: the idempotency hash of
   * `(channel_id, channel_type, from_uid, client_msg_no)` (`sqlite/idem-hash.ts`),
   * null when client_msg_no is ''. Every SQLite insert fills it.
   */
  idem_hash?: bigint | null;
}

/** A floor for a channel's tail, for logs whose newest messages were removed or imported. */
export interface ChannelLogTable {
  channel_id: string;
  channel_type: number;
  tail_seq: number;
}

/** A uid's binding to a command log, for offline command recovery (`/message/sync`). */
export interface CmdBindingsTable {
  uid: string;
  /** The command log's channel id (source id + `____cmd`). */
  channel_id: string;
  channel_type: number;
  /** First command seq this binding recovers (the log's tail + 1 when bound). */
  start_seq: number;
  ack_seq: Generated<number>;
  removed: Generated<number>;
  updated_at: number;
}

/** Stream events appended to a message (`/message/event`), numbered per message. */
export interface MessageEventsTable {
  channel_id: string;
  channel_type: number;
  client_msg_no: string;
  event_seq: number;
  event_id: string;
  event_key: string;
  event_type: string;
  from_uid: string;
  message_id: bigint | string;
  visibility: string;
  occurred_at: number;
  /** Raw JSON text of the event payload ('null' when absent). */
  payload: string;
  created_at: number;
}

/** Ownership of one physical slot (cluster mode): granted until `expires_at`, numbered by `epoch`. */
export interface SlotLeasesTable {
  slot: number;
  /** Owning node id; null once released. */
  owner: number | null;
  /** Raised by every acquisition; an append fenced with an older epoch fails. */
  epoch: Generated<number | string>;
  /** Unix ms by the database's clock; 0 when released. */
  expires_at: Generated<number | string>;
  updated_at: number;
}

/** A node of the cluster as it last announced itself. */
export interface ClusterNodesTable {
  node_id: number;
  /** JSON object of the node's addresses (as the node gives them). */
  addresses: string;
  started_at: number;
  /** Unix ms by the database's clock. */
  last_seen: number;
  /** The node's own state revision (it raises it when its state changes). */
  state_revision: Generated<number | string>;
}
