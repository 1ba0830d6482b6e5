/**
 * The SQLite writer thread: owns the connection that appends messages, so a
 * commit and its fsync never block the event loop. Runs one batch at a time
 * in a `BEGIN IMMEDIATE` transaction with statements prepared once. Started as
 * `checkpointer`, the same file copies the WAL back into the database every
 * `checkpointEveryMs` (PASSIVE: it never waits for or blocks the writer).
 *
 * SQLite writes the WAL from its start again (a restart) only when a write
 * transaction begins on a WAL whose every frame is copied. Under a steady load
 * the writer commits while the checkpointer copies, so a pass never ends with
 * nothing left, and the WAL file grew by every commit (16 MB/s at 5k
 * messages/s). So after a pass over a WAL of `followAfterWalBytes` or more the
 * checkpointer raises a flag and the writer, after its next commit, copies the
 * frames appended since itself: its next transaction then restarts the WAL.
 * That copy ends with an fsync of the database file, the writer's one stall, so
 * it happens only once the WAL is that large (every few seconds under load, not
 * after every pass); and since a pass that does not catch up leaves its pages
 * unsynced (SQLite syncs the database only at the end of a checkpoint that
 * copied everything), the checkpointer syncs them itself, so that the writer's
 * fsync waits for its own pages only.
 * Imports only node and better-sqlite3, so it runs compiled or under tsx.
 */
import process from 'node:process';
import { performance } from 'node:perf_hooks';
import { closeSync, fdatasyncSync, openSync, readlinkSync, writeFileSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import SqliteDatabase from 'better-sqlite3';
import { idemHash } from './idem-hash.ts';
import { WAL_BUFFER_PRAGMA } from './wal-buffer.ts';
import {
  CHECKPOINTED,
  EVENT_FIELDS,
  IDEMPOTENCY_LOOKUP_SQL,
  MARK_FIELDS,
  MEMBER_FIELDS,
  MESSAGE_FIELDS,
  THREAD_NAMES,
  type WriterInit,
  type WriterReply,
  type WriterRequest,
} from './writer-protocol.ts';

const init = workerData as WriterInit;
/** Rows per INSERT statement (13 values each, under SQLite's 32,766 variables). */
const MAX_ROWS_PER_INSERT = 64;
const port = parentPort!;
const reply = (m: WriterReply) => port.postMessage(m);
/** What a `failed` or `open-failed` reply says of `err`: SQLite's code (`SQLITE_FULL`, …) when it has one, and its message. */
const failure = (err: unknown) => {
  const code = (err as { code?: unknown }).code;
  return { code: typeof code === 'string' ? code : undefined, message: (err as Error).message };
};
/**
 * The connection's page cache, KiB (SQLite's default is 16 MB). At the end of
 * almost every commit SQLite visits every page its cache holds (the walk in
 * the README's "What an append writes"), a cache miss per page: with 16 MB of
 * 1 KiB pages, once full, some 100 µs of this thread's CPU per commit, far
 * more than its instruction count says. What fills a large cache is mostly
 * pages appends never come back to (the table's and `messages_by_id`'s full
 * leaves); the ones they do (each channel's tail leaf in the key index, the
 * senders' membership rows, interior pages) fit in this. Measured with
 * bench/writer-cpu.ts (README, "A commit's fixed cost"): the writer thread's
 * CPU per message 5-16% lower, the more the larger the store, for up to one
 * more `pread` per message.
 */
const PAGE_CACHE_KIB = 4000;
/** Marks pending for this many `markApplyMs` are applied inside the next batch's transaction (see `overdueMs`). */
const MARK_OVERDUE_FACTOR = 10;
/**
 * Memberships a batch's transaction raises of the sweep under way (one indexed UPDATE each, well
 * under a millisecond for all of them); `MARK_SLICE_LATE` once the sweep has taken longer than
 * `markApplyMs`, so that it keeps up with many senders at few batches a second.
 */
const MARK_SLICE = 64;
const MARK_SLICE_LATE = 512;
/** Memberships whose rowids the writer thread keeps at most (some 100 bytes each): past it, it forgets them all. */
const ROWID_CACHE_MAX = 100_000;
/** How much lower than the process's the checkpointer thread runs, nice steps (see where it is set). */
const CHECKPOINTER_NICE_STEPS = 10;

/**
 * A membership's newest mark the writer thread holds: the membership's rowid in `memberships` when
 * it had one as the mark was taken in (a sweep raises its rows in rowid order, so a slice's rows
 * share pages), then its key and the seq.
 */
interface Mark {
  rowid: number | undefined;
  /** channel_id, channel_type and uid, joined by NULs. */
  key: string;
  channelId: string;
  channelType: number;
  uid: string;
  seq: number;
}
/** A sweep of pending marks under way (see `runWriter`). */
interface Sweep {
  marks: Mark[];
  next: number;
  through: number;
  rowid: number;
  since: number;
}
/** The part `[from, to)` of a sweep's marks a batch's transaction applies; `done` once it did. */
interface SweepSlice {
  sweep: Sweep;
  from: number;
  to: number;
  done: boolean;
}
/** What of the pending marks a batch's transaction applies: a slice, every one, or none. */
type Slice = SweepSlice | 'all' | undefined;
/** Shared with the other thread: `CHECKPOINTED` is 1 after a checkpointer pass the writer has not followed yet. */
const signal = new Int32Array(init.signal);

// Named, so that `top -H`, `perf` and the bench's per-thread CPU tell the two SQLite threads from
// V8's and libuv's (in Node 20 every thread but the main one is called `node`). Linux lets a
// thread rename itself through /proc; elsewhere, or without /proc, it keeps its name.
try {
  if (process.platform === 'linux') writeFileSync('/proc/thread-self/comm', THREAD_NAMES[init.role]);
} catch {
  // A name is a diagnostic only.
}
// The checkpointer's passes are background work: once a second it copies the pages committed
// since the last pass (some 3,000 at 5k msg/s, a `pread` and a `pwrite` each, ~20 ms of CPU in
// one burst). At the priority of the event loop and the writer it took turns with them on a
// shared core, and the sends arriving meanwhile waited (in S1 at 5k msg/s, a third of the
// windows holding sendacks over 20 ms had a pass in them). `CHECKPOINTER_NICE_STEPS` lower it
// runs when the core is otherwise idle and still gets about a tenth of a busy thread's share.
// Linux: `setpriority` on a thread id changes that thread alone.
if (init.role === 'checkpointer' && process.platform === 'linux') {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    setPriority(tid, Math.min(19, getPriority(tid) + CHECKPOINTER_NICE_STEPS));
  } catch {
    // Left at the process's priority.
  }
}

let db: SqliteDatabase.Database;
try {
  db = new SqliteDatabase(init.file, { fileMustExist: true });
  db.pragma(`busy_timeout = ${init.busyTimeoutMs}`);
  db.pragma(`synchronous = ${init.sync === 'full' ? 'FULL' : 'NORMAL'}`);
  // Checkpoints are the checkpointer thread's, never part of a commit.
  db.pragma('wal_autocheckpoint = 0');
  // The connection that restarts the WAL cuts its file back to this size.
  db.pragma(`journal_size_limit = ${init.walSizeLimitBytes}`);
  db.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
  if (init.walBuffer && init.role === 'writer') {
    // Answered by the extension's VFS only: without it SQLite ignores an unknown pragma.
    const state: unknown = db.pragma(`${WAL_BUFFER_PRAGMA} = on`, { simple: true });
    if (state !== 'on')
      throw new Error(`the WAL buffer is not SQLite's VFS on the writer thread (${WAL_BUFFER_PRAGMA} answered ${String(state)})`);
  }
} catch (err) {
  reply({ kind: 'open-failed', ...failure(err) });
  process.exit(1);
}

if (init.role === 'checkpointer') runCheckpointer(db);
else runWriter(db);

function runWriter(db: SqliteDatabase.Database): void {
  // One INSERT per batch of up to MAX_ROWS_PER_INSERT rows, its statement prepared once per row count.
  // `or rollback`: a taken (channel, seq) ends the whole transaction at once, as the batch fails
  // whole anyway. A plain INSERT (ABORT) inside a transaction first copies every page it
  // changes into a statement journal so that it alone could be undone; a batch's pages are
  // more than that journal's 64 KiB in memory, so it became a temporary file created, written
  // and deleted on every commit (5 extra syscalls plus one write per page beyond 64 KiB).
  const inserts: SqliteDatabase.Statement[] = [];
  const insertOf = (rows: number) =>
    (inserts[rows] ??= db.prepare(
      `insert or rollback into messages (channel_id, channel_type, message_seq, message_id, client_msg_no, from_uid, setting, flags, expire, topic, created_at, payload, idem_hash)
       values ${Array.from({ length: rows }, () => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
    ));
  // A batch's latest-send marks are appended to `pending_marks` (rows at the table's end: the
  // batch's marks share a page or two) instead of raising each sender's membership row (a random
  // page per sender and batch). This thread also keeps them in memory, newest per membership
  // (`fresh`); every `markApplyMs` they become a sweep, applied a slice at a time inside the next
  // batches' own transactions (no transaction, commit or fsync of their own, so appends never
  // wait for one under load) in the order of the memberships' rowids (a slice's rows share
  // pages: the sweep writes each page of `memberships` about once, as one apply did), and the
  // sweep's last slice deletes its rows. A crash leaves the rows in place and the next start
  // applies them before the first batch.
  const logs: SqliteDatabase.Statement[] = [];
  const logOf = (rows: number) =>
    (logs[rows] ??= db.prepare(
      `insert into pending_marks (channel_id, channel_type, uid, seq) values ${Array.from({ length: rows }, () => '(?, ?, ?, ?)').join(', ')}`,
    ));
  // A person channel's participants become members in the transaction of its first message; a
  // membership that exists stays as it is (its join_seq, read state and marks).
  const ensures: SqliteDatabase.Statement[] = [];
  const ensureOf = (rows: number) =>
    (ensures[rows] ??= db.prepare(
      `insert into memberships (channel_id, channel_type, uid, join_seq, updated_at)
       values ${Array.from({ length: rows }, () => '(?, ?, ?, 1, ?)').join(', ')} on conflict do nothing`,
    ));
  // Every pending mark at once, in one statement (start-up, close, an idle writer, overdue marks).
  const applyPending = db.prepare(
    `update memberships set last_send_seq = p.seq
     from (select channel_id, channel_type, uid, max(seq) as seq from pending_marks group by channel_id, channel_type, uid) as p
     where memberships.channel_id = p.channel_id and memberships.channel_type = p.channel_type and memberships.uid = p.uid
       and memberships.last_send_seq < p.seq`,
  );
  const clearPending = db.prepare('delete from pending_marks');
  const applyMarks = db.transaction(() => {
    applyPending.run();
    clearPending.run();
  });
  // A sweep's slice: one membership per statement, by key (the rowid only orders the sweep, so a
  // stale one costs the order, never a wrong row), and its rows deleted with the last slice.
  const raiseMark = db.prepare(
    'update memberships set last_send_seq = ? where channel_id = ? and channel_type = ? and uid = ? and last_send_seq < ?',
  );
  const rowidOf = db.prepare('select rowid from memberships where channel_id = ? and channel_type = ? and uid = ?').pluck();
  const clearThrough = db.prepare('delete from pending_marks where rowid <= ?');
  /**
   * Applies `marks[from, to)` and, when `rowid` is given, deletes the pending rows up to it. Called
   * inside a batch's transaction it runs in a savepoint of its own: a failure undoes the slice
   * alone and the batch commits without it.
   */
  const applySlice = db.transaction((marks: readonly Mark[], from: number, to: number, rowid: number | undefined) => {
    for (let i = from; i < to; i++) {
      const k = marks[i]!;
      raiseMark.run(k.seq, k.channelId, k.channelType, k.uid, k.seq);
    }
    if (rowid !== undefined) clearThrough.run(rowid);
  });
  /**
   * How long marks may stay pending before the next batch applies them inside its own
   * transaction, ms. A slice or an apply of its own only fails when the store does (the rows stay
   * and a later batch tries again), and appends then usually fail too. Should slices alone keep
   * failing, the marks would pile up in `pending_marks` and in the main thread's list of
   * unapplied batches without end; past this every pending mark is applied as part of the
   * append, so a failure that persists fails the batch (and is reported as every append failure is).
   */
  const overdueMs = init.markApplyMs * MARK_OVERDUE_FACTOR;
  /** Marks committed since the last sweep began, the newest per membership, by key. */
  let fresh = new Map<string, Mark>();
  /** When the oldest batch in `fresh` committed (`performance.now()`); `Infinity` while it is empty. */
  let freshSince = Infinity;
  /**
   * The sweep under way: the marks of every batch up to `through` (an append id), newest per
   * membership, applied up to `next`; their rows in `pending_marks` are those up to `rowid`; the
   * oldest of them committed at `since`.
   */
  let sweep: Sweep | undefined;
  /** Whether `pending_marks` may hold rows that neither `fresh` nor `sweep` knows (after a crash: the first apply runs before `ready`). */
  let unknownRows = true;
  /** The newest row of `pending_marks` committed, and the batch that committed it. */
  let lastRowid = 0;
  let lastMarked = 0;
  /** When the last sweep began, and when the last batch was handed over (`performance.now()`). */
  let sweptAt = performance.now();
  let lastAppendAt = -Infinity;
  const marksPending = () => unknownRows || sweep !== undefined || fresh.size > 0;
  /** After every pending mark was applied: nothing is pending any more. */
  const allApplied = () => {
    unknownRows = false;
    sweep = undefined;
    fresh = new Map();
    freshSince = Infinity;
    sweptAt = performance.now();
  };
  /**
   * The rowids of memberships marks were taken in for (by key), so that a membership is looked up
   * once, not once a sweep; emptied when it reaches `ROWID_CACHE_MAX`. One that went stale (the
   * membership deleted and made again) costs only the order: the slice updates by key.
   */
  const rowids = new Map<string, number>();
  /**
   * Adds a committed batch's marks (`MARK_FIELDS` values each) to `fresh`, each membership new to
   * it with its rowid when `rowids` has it; answers those it lacks.
   */
  const takeIn = (marks: readonly unknown[], at: number): Mark[] | undefined => {
    if (marks.length === 0) return undefined;
    if (fresh.size === 0) freshSince = at;
    let missing: Mark[] | undefined;
    for (let i = 0; i < marks.length; i += MARK_FIELDS) {
      const channelId = marks[i] as string;
      const channelType = marks[i + 1] as number;
      const uid = marks[i + 2] as string;
      const seq = marks[i + 3] as number;
      const key = `${channelId}\u0000${channelType}\u0000${uid}`;
      const known = fresh.get(key);
      if (known === undefined) {
        const mark: Mark = { rowid: rowids.get(key), key, channelId, channelType, uid, seq };
        fresh.set(key, mark);
        if (mark.rowid === undefined) (missing ??= []).push(mark);
      } else if (known.seq < seq) known.seq = seq;
    }
    return missing;
  };
  /** Looks the rowids of `missing` up (one indexed read each), in one read transaction. */
  const lookUp = db.transaction((missing: readonly Mark[]) => {
    for (const mark of missing) {
      const rowid = rowidOf.get(mark.channelId, mark.channelType, mark.uid) as number | undefined;
      if (rowid === undefined) continue;
      mark.rowid = rowid;
      if (rowids.size >= ROWID_CACHE_MAX) rowids.clear();
      rowids.set(mark.key, rowid);
    }
  });
  /**
   * Takes a committed batch's marks in, after its reply (no acknowledgement waits for a look-up);
   * a failing look-up only costs the order: those marks stay without rowids.
   */
  const rememberCommitted = (marks: readonly unknown[], at: number) => {
    const missing = takeIn(marks, at);
    if (missing === undefined) return;
    try {
      lookUp(missing);
    } catch {
      // Raised by key instead.
    }
  };
  /** Applies every pending mark in a transaction of its own when the writer has been idle for `markApplyMs` (or now, with `force`). */
  const maybeApplyMarks = (force: boolean) => {
    if (!marksPending() || (!force && performance.now() - lastAppendAt < init.markApplyMs)) return;
    const started = performance.now();
    applyMarks.immediate();
    allApplied();
    reply({ kind: 'applied', through: lastMarked, ms: performance.now() - started });
  };
  /** The same, where a failure (busy, disk full) only means a later call tries again: the rows stay in `pending_marks`. */
  const tryApplyMarks = (force: boolean) => {
    try {
      maybeApplyMarks(force);
    } catch {
      // Appends on a failing store fail too and report it; the next start applies what is left.
    }
  };
  // The send path's idempotency look-up, on this connection: its page cache keeps the index
  // pages this thread writes, where the main connection's is emptied by every commit it did
  // not make.
  const earlier = db.prepare(IDEMPOTENCY_LOOKUP_SQL);
  // Whether any message has the key's hash: one integer bound instead of the key's three strings as
  // well. Almost every key has none; only when one does is the full look-up (the four columns) run.
  const anyUnderHash = db
    .prepare(`select 1 from messages indexed by messages_by_idem_hash where idem_hash = ? and client_msg_no <> ''`)
    .pluck();
  /**
   * Puts in each message's place the view of its payload (its length was sent; the payloads lie one
   * after another in `payloads`) and, when it has a client_msg_no, its idempotency hash (the last field).
   */
  const fillRows = (messages: unknown[], payloads: ArrayBuffer) => {
    const bytes = new Uint8Array(payloads);
    let at = 0;
    for (let i = 0; i < messages.length; i += MESSAGE_FIELDS) {
      const n = messages[i + MESSAGE_FIELDS - 2] as number;
      messages[i + MESSAGE_FIELDS - 2] = bytes.subarray(at, at + n);
      at += n;
      const clientMsgNo = messages[i + 4] as string;
      if (clientMsgNo !== '') {
        messages[i + MESSAGE_FIELDS - 1] = idemHash(
          messages[i] as string,
          messages[i + 1] as number,
          messages[i + 5] as string,
          clientMsgNo,
        );
      }
    }
  };
  /** Earlier messages under the batch's idempotency keys, `HIT_FIELDS` values each (hashes filled). */
  const hitsOf = (messages: unknown[]) => {
    const hits: unknown[] = [];
    for (let i = 0; i < messages.length; i += MESSAGE_FIELDS) {
      const clientMsgNo = messages[i + 4];
      const fromUid = messages[i + 5];
      if (clientMsgNo === '' || fromUid === '') continue;
      if (anyUnderHash.get(messages[i + MESSAGE_FIELDS - 1]) === undefined) continue;
      const r = earlier.get(messages[i + MESSAGE_FIELDS - 1], messages[i], messages[i + 1], fromUid, clientMsgNo) as
        { id_text: string; message_seq: number; payload: Uint8Array } | undefined;
      if (r) hits.push(messages[i], messages[i + 1], fromUid, clientMsgNo, r.id_text, r.message_seq, r.payload);
    }
    return hits;
  };
  /** The last rowid of `pending_marks` the running batch's transaction inserted, if it inserted any. */
  let insertedRowid: number | undefined;
  const append = db.transaction(
    (messages: unknown[], marks: unknown[], members: unknown[], check: boolean, slice: Slice): unknown[] | undefined => {
      if (check) {
        const hits = hitsOf(messages);
        // Nothing written yet: the transaction ends without a change (no WAL frame, no fsync).
        if (hits.length > 0) return hits;
      }
      if (slice === 'all') {
        // Overdue marks (their slices kept failing): every one applied here, before this batch's own.
        applyPending.run();
        clearPending.run();
      } else if (slice !== undefined) {
        try {
          applySlice(slice.sweep.marks, slice.from, slice.to, slice.to === slice.sweep.marks.length ? slice.sweep.rowid : undefined);
          slice.done = true;
        } catch {
          // Undone alone (its savepoint): the batch commits, and a later one tries the slice again.
        }
      }
      const memberStep = MAX_ROWS_PER_INSERT * MEMBER_FIELDS;
      for (let i = 0; i < members.length; i += memberStep) {
        const values = i === 0 && members.length <= memberStep ? members : members.slice(i, i + memberStep);
        ensureOf(values.length / MEMBER_FIELDS).run(...values);
      }
      // Values are bound as arguments, not as one array: better-sqlite3 reads an array's elements
      // one by one through V8's generic property look-up, its arguments directly.
      const step = MAX_ROWS_PER_INSERT * MESSAGE_FIELDS;
      for (let i = 0; i < messages.length; i += step) {
        const values = i === 0 && messages.length <= step ? messages : messages.slice(i, i + step);
        insertOf(values.length / MESSAGE_FIELDS).run(...values);
      }
      const markStep = MAX_ROWS_PER_INSERT * MARK_FIELDS;
      for (let i = 0; i < marks.length; i += markStep) {
        const values = i === 0 && marks.length <= markStep ? marks : marks.slice(i, i + markStep);
        insertedRowid = Number(logOf(values.length / MARK_FIELDS).run(...values).lastInsertRowid);
      }
      return undefined;
    },
  );
  // Stream events of messages: numbered 1, 2, 3 … per message in the order they are handed over,
  // idempotent by event id. On this connection, as messages are: the main connection's reads then
  // never wait for a commit, and a stream's deltas share the writer's commits.
  // The stored event's values in `STORED_EVENT_FIELDS` order.
  const eventById = db
    .prepare(
      `select event_seq, event_key, event_type, from_uid, cast(message_id as text), visibility, occurred_at, payload, created_at
       from message_events where channel_id = ? and channel_type = ? and client_msg_no = ? and event_id = ?`,
    )
    .raw();
  const lastEventSeq = db
    .prepare('select max(event_seq) from message_events where channel_id = ? and channel_type = ? and client_msg_no = ?')
    .pluck();
  const insertEvent = db.prepare(
    `insert into message_events (channel_id, channel_type, client_msg_no, event_seq, event_id, event_key, event_type, from_uid, message_id, visibility, occurred_at, payload, created_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  /** Appends the events in order (an event whose id its message has answers the stored one); `STORED_EVENT_FIELDS` values each. */
  const appendEvents = db.transaction((events: unknown[]): unknown[] => {
    const stored: unknown[] = [];
    const createdAt = Date.now();
    for (let i = 0; i < events.length; i += EVENT_FIELDS) {
      const [channelId, channelType, clientMsgNo, eventId, eventKey, eventType, fromUid, messageId, visibility, occurredAt, payload] =
        events.slice(i, i + EVENT_FIELDS);
      const found = eventById.get(channelId, channelType, clientMsgNo, eventId) as unknown[] | undefined;
      if (found) {
        stored.push(...found);
        continue;
      }
      const seq = Number((lastEventSeq.get(channelId, channelType, clientMsgNo) as number | null) ?? 0) + 1;
      insertEvent.run(
        channelId,
        channelType,
        clientMsgNo,
        seq,
        eventId,
        eventKey,
        eventType,
        fromUid,
        messageId,
        visibility,
        occurredAt,
        payload,
        createdAt,
      );
      stored.push(seq, eventKey, eventType, fromUid, String(messageId), visibility, occurredAt, payload, createdAt);
    }
    return stored;
  });
  const checkpoint = db.prepare('pragma wal_checkpoint(PASSIVE)');
  /**
   * After a checkpointer pass: copies the frames committed since it (PASSIVE: skips what a
   * reader still needs, never waits), so that the next transaction starts on a WAL copied
   * whole and restarts it. A reader in the WAL at that moment keeps it from restarting; the
   * next pass tries again.
   */
  const followCheckpointer = () => {
    if (Atomics.exchange(signal, CHECKPOINTED, 0) === 0) return;
    try {
      const started = performance.now();
      checkpoint.get();
      reply({ kind: 'followed', ms: performance.now() - started });
    } catch {
      // Busy or failing: the next pass tries again; commits report storage failures.
    }
  };
  const applyWhenIdle = setInterval(() => tryApplyMarks(false), init.markApplyMs);
  port.on('message', (m: WriterRequest) => {
    if (m.kind === 'close') {
      clearInterval(applyWhenIdle);
      tryApplyMarks(true);
      db.close();
      reply({ kind: 'closed' });
      port.close();
      return;
    }
    if (m.kind === 'events') {
      try {
        reply({ kind: 'events', id: m.id, stored: appendEvents.immediate(m.events) });
      } catch (err) {
        reply({ kind: 'failed', id: m.id, ...failure(err) });
      }
    } else appendMessages(m);
    // After the reply: the batch's acknowledgement does not wait for it.
    followCheckpointer();
  });
  /** Commits a batch of messages and answers `done`, `hits` or `failed`. */
  function appendMessages(m: Extract<WriterRequest, { kind: 'append' }>): void {
    const started = performance.now();
    lastAppendAt = started;
    try {
      // Before the transaction: the views and hashes need no lock.
      fillRows(m.messages, m.payloads);
      const slice = sliceFor(started);
      insertedRowid = undefined;
      const hits = append.immediate(m.messages, m.marks, m.members, m.check, slice);
      if (hits) {
        reply({ kind: 'hits', id: m.id, hits });
        return;
      }
      // Committed: what the transaction did to the pending marks, then this batch's own.
      const appliedThrough = lastMarked;
      let applied = false;
      if (slice === 'all') {
        allApplied();
        applied = true;
      } else if (slice?.done) {
        if (sweep !== slice.sweep) {
          // The sweep began with this batch: `fresh` went into it.
          sweep = slice.sweep;
          fresh = new Map();
          freshSince = Infinity;
          sweptAt = started;
        }
        sweep.next = slice.to;
        if (slice.to === sweep.marks.length) {
          sweep = undefined;
          applied = true;
        }
      }
      if (insertedRowid !== undefined) {
        lastRowid = insertedRowid;
        lastMarked = m.id;
      }
      reply({ kind: 'done', id: m.id, commitMs: performance.now() - started });
      if (applied) reply({ kind: 'applied', through: slice === 'all' ? appliedThrough : (slice as SweepSlice).sweep.through });
      if (insertedRowid !== undefined) rememberCommitted(m.marks, started);
    } catch (err) {
      reply({ kind: 'failed', id: m.id, ...failure(err) });
    }
  }
  /**
   * What of the pending marks the next batch's transaction applies: every one (`all`: overdue, or
   * rows a crash left), the next slice of the sweep under way, the first slice of a new sweep of
   * `fresh` once `markApplyMs` has passed since the last one began, or nothing.
   */
  function sliceFor(now: number): Slice {
    const oldest = unknownRows ? -Infinity : Math.min(sweep?.since ?? Infinity, freshSince);
    if (now - oldest >= overdueMs) return 'all';
    let s = sweep;
    if (s === undefined) {
      if (fresh.size === 0 || now - sweptAt < init.markApplyMs) return undefined;
      const marks = [...fresh.values()].sort((a, b) => (a.rowid ?? Infinity) - (b.rowid ?? Infinity));
      s = { marks, next: 0, through: lastMarked, rowid: lastRowid, since: freshSince };
    }
    const size = now - sweptAt > init.markApplyMs ? MARK_SLICE_LATE : MARK_SLICE;
    return { sweep: s, from: s.next, to: Math.min(s.marks.length, s.next + size), done: false };
  }
  // What a crash left in `pending_marks`, before the first batch.
  try {
    maybeApplyMarks(true);
  } catch (err) {
    reply({ kind: 'open-failed', ...failure(err) });
    process.exit(1);
  }
  reply({ kind: 'ready' });
}

function runCheckpointer(db: SqliteDatabase.Database): void {
  const checkpoint = db.prepare<[], { busy: number; log: number; checkpointed: number }>('pragma wal_checkpoint(PASSIVE)');
  /** The WAL's size in frames at which the writer is asked to follow a pass (each frame: its page and a 24-byte header). */
  const followAfterFrames = Math.max(1, Math.floor(init.followAfterWalBytes / ((db.pragma('page_size', { simple: true }) as number) + 24)));
  /** The database file, for syncing what a pass copied (an fsync of any descriptor of a file syncs the file). */
  const dbFile = openSync(init.file, 'r');
  /** The WAL's frames and those copied after the previous pass: the same again means nothing was written since. */
  let last = { log: -1, checkpointed: -1 };
  const timer = setInterval(() => {
    try {
      const r = checkpoint.get();
      if (!r || r.busy !== 0) return;
      const changed = r.log !== last.log || r.checkpointed !== last.checkpointed;
      last = { log: r.log, checkpointed: r.checkpointed };
      if (!changed || r.log === 0) return;
      // SQLite syncs the database file after a pass only when no frame was left to copy at its end;
      // under load the writer has always committed more by then, so what the pass copied is left
      // unsynced. `log` is the WAL as the pass began, so `checkpointed == log` does not tell the two
      // apart: sync after every pass that copied frames, here, off the writer (after a pass that
      // did catch up there is nothing left to write).
      fdatasyncSync(dbFile);
      // A large WAL: let the writer copy what came after this pass, so that the WAL restarts.
      if (r.log >= followAfterFrames) Atomics.store(signal, CHECKPOINTED, 1);
    } catch {
      // Busy or failing: the next round tries again; the writer reports storage failures.
    }
  }, init.checkpointEveryMs);
  port.on('message', (m: WriterRequest) => {
    if (m.kind !== 'close') return;
    clearInterval(timer);
    closeSync(dbFile);
    db.close();
    reply({ kind: 'closed' });
    port.close();
  });
  reply({ kind: 'ready' });
}
