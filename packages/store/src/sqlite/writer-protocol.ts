/**
 * The messages between the main thread and the SQLite writer thread
 * (`writer-thread.ts`). Rows travel as one flat array per batch (one
 * structured clone, no object per row): `MESSAGE_FIELDS` values per message,
 * `MARK_FIELDS` per latest-send mark, in the order of the statements'
 * placeholders. A batch's payloads lie one after another in one buffer of the
 * batch's own, in the request's transfer list (moved to the thread, not
 * copied); each message's payload value is its length in bytes, which the
 * thread turns into a view of that buffer.
 */

/** What the thread is started with. */
export interface WriterInit {
  file: string;
  /** `full` fsyncs every commit (an acknowledged message is durable). */
  sync: 'full' | 'normal';
  busyTimeoutMs: number;
  /** `writer` commits batches; `checkpointer` only copies the WAL back into the database. */
  role: 'writer' | 'checkpointer';
  /** Checkpointer: how often it looks at the WAL, ms. */
  checkpointEveryMs: number;
  /** Writer: `PRAGMA journal_size_limit`, the size a restarted WAL file is cut back to, bytes. */
  walSizeLimitBytes: number;
  /**
   * One Int32 shared by both threads (`CHECKPOINTED`): the checkpointer sets it to 1 after a
   * pass over a WAL that held at least `followAfterWalBytes`; the writer, after its next commit,
   * resets it and checkpoints the frames appended since, so that its next transaction starts on
   * a fully copied WAL and SQLite writes the WAL again from its start.
   */
  signal: SharedArrayBuffer;
  /** Checkpointer: how large the WAL grows before the writer is asked to follow a pass, bytes. */
  followAfterWalBytes: number;
  /**
   * Writer: how long committed latest-send marks may wait in `pending_marks` before they are
   * applied to `memberships`, ms: a slice at a time inside the next batches' transactions, or in
   * one transaction of their own when no batch came for this long.
   */
  markApplyMs: number;
  /**
   * Writer: gather each commit's WAL frames and write them with one call before its fsync
   * (`PRAGMA parley_wal_buffer = on`; `wal-buffer.ts`). Only set when the extension is loaded
   * and `sync` is `full`.
   */
  walBuffer: boolean;
}

/**
 * Each thread's name (Linux: `/proc/<pid>/task/<tid>/comm`, at most 15 bytes), as `top -H`,
 * `perf` and the bench's per-thread CPU show it; in Node 20 every other thread is `node`.
 */
export const THREAD_NAMES = { writer: 'parley-writer', checkpointer: 'parley-ckpt' } as const;

/** Index in `WriterInit.signal` of the checkpointer's "a pass over a large WAL just ended" flag. */
export const CHECKPOINTED = 0;

/**
 * Values per message: channel_id, channel_type, message_seq, message_id, client_msg_no, from_uid, setting, flags, expire, topic,
 * created_at, payload, idem_hash. The main thread sends the payload as its byte length (the bytes are in the request's `payloads`)
 * and idem_hash as `null`; the writer thread puts a view of the bytes and the hash (`idem-hash.ts`) in their places.
 */
export const MESSAGE_FIELDS = 13;
/** Values per mark: channel_id, channel_type, uid, seq (the columns of `pending_marks`). */
export const MARK_FIELDS = 4;
/** Values per membership the batch makes sure of: channel_id, channel_type, uid, updated_at (join_seq 1; an existing row stays). */
export const MEMBER_FIELDS = 4;
/** Values per idempotency hit: channel_id, channel_type, from_uid, client_msg_no, message_id (decimal text), message_seq, payload. */
export const HIT_FIELDS = 7;

/**
 * The idempotency look-up of one key: an index seek on `messages_by_idem_hash` by the key's hash
 * (`idem-hash.ts`), then all four columns compared, so another key with the same hash is never a hit.
 * Parameters: idem_hash, channel_id, channel_type, from_uid, client_msg_no. Run by the main connection
 * and, inside a commit, by the writer thread.
 */
export const IDEMPOTENCY_LOOKUP_SQL = `select cast(message_id as text) as id_text, message_seq, payload from messages indexed by messages_by_idem_hash
     where idem_hash = ? and channel_id = ? and channel_type = ? and from_uid = ? and client_msg_no = ? and client_msg_no <> ''`;

/**
 * Values per stream event handed to the writer: channel_id, channel_type, client_msg_no, event_id, event_key,
 * event_type, from_uid, message_id (bigint), visibility, occurred_at, payload (JSON text).
 */
export const EVENT_FIELDS = 11;
/**
 * Values per stored event the writer answers, in the order of the events handed over: event_seq, event_key,
 * event_type, from_uid, message_id (decimal text), visibility, occurred_at, payload, created_at; for an event
 * whose id the message already had, the earlier event's.
 */
export const STORED_EVENT_FIELDS = 9;

/**
 * Main → writer. With `check`, the writer first looks up the idempotency key
 * of every message that has one; when any was committed before it writes
 * nothing and answers `hits` instead of `done`. `members` are memberships the
 * same transaction makes sure of before its messages (a person channel's two
 * participants with its first message).
 */
export type WriterRequest =
  | { kind: 'append'; id: number; messages: unknown[]; payloads: ArrayBuffer; marks: unknown[]; members: unknown[]; check: boolean }
  /** Stream events (`EVENT_FIELDS` values each), appended in order in one transaction. */
  | { kind: 'events'; id: number; events: unknown[] }
  | { kind: 'close' };

/** Writer → main. */
export type WriterReply =
  | { kind: 'ready' }
  | { kind: 'done'; id: number; commitMs: number }
  /**
   * Every mark of the batches up to `through` (an `append` id) is now in `memberships`; `ms`: how
   * long the transaction of their own took (absent when a batch's transaction applied them).
   */
  | { kind: 'applied'; through: number; ms?: number }
  /** The follow-up checkpoint after a checkpointer pass (so that the WAL restarts) took `ms`. */
  | { kind: 'followed'; ms: number }
  | { kind: 'hits'; id: number; hits: unknown[] }
  /** The events of an `events` request, stored (`STORED_EVENT_FIELDS` values each). */
  | { kind: 'events'; id: number; stored: unknown[] }
  | { kind: 'failed'; id: number; code: string | undefined; message: string }
  | { kind: 'open-failed'; code: string | undefined; message: string }
  | { kind: 'closed' };
