import { performance } from 'node:perf_hooks';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { EnsuredMember, LastSendMark } from '../repositories/membership.repository.ts';
import type { IdempotentHit, StoredMessage } from '../repositories/message.repository.ts';
import type { MessageEvent } from '../repositories/message-event.repository.ts';
import { BUSY_TIMEOUT_MS } from './open.ts';
import { HIT_FIELDS, STORED_EVENT_FIELDS, type WriterInit, type WriterReply, type WriterRequest } from './writer-protocol.ts';
import type { WriteHealth } from './write-health.ts';
import { WriterTimings, type WriterPauseReason } from './writer-timings.ts';

/**
 * How often the checkpointer copies the WAL back into the database, ms (a
 * PASSIVE checkpoint: it skips pages a reader still needs and never blocks the
 * writer; with nothing new in the WAL it costs almost nothing).
 */
const CHECKPOINT_EVERY_MS = 1000;

/**
 * How long a committed latest-send mark may wait in `pending_marks` before the writer thread
 * applies it to `memberships`, ms. Until then `SqliteWriter.readWithMarks` adds it to the reads.
 */
const MARK_APPLY_MS = 1000;

/**
 * The size the WAL file is cut back to when SQLite starts writing it from its
 * start again, bytes (`PRAGMA journal_size_limit`). Under a steady load the
 * writer restarts the WAL once it has grown to `FOLLOW_AFTER_WAL_BYTES`, so the
 * file stays near that size and is reused in place. Only a WAL that grew past
 * this (a reader kept it from being restarted during a burst) is truncated, so
 * the disk it took is given back.
 */
export const WAL_SIZE_LIMIT_BYTES = 256 * 1024 * 1024;

/**
 * How large the WAL grows under load before the writer copies the frames a
 * checkpointer pass left behind so that it restarts, bytes (half the size
 * limit, so a restarted file is rarely cut back). That copy stalls the writer
 * whatever the WAL's size: it copies what was committed while the pass ran and
 * synced (tens of ms of commits) and syncs those pages, 20–35 ms at 10–12k
 * messages/s on the bench's host, while sends wait. So the larger the WAL may
 * grow, the rarer the stall: at 32 MiB it came about once a second at 12k
 * messages/s, at 128 MiB once every three to four (BENCHMARKS.md,
 * thirty-third round). The price: the WAL file's disk space, SQLite's WAL
 * index (about 1 MiB of shared memory at this size) and its recovery read of
 * the WAL after a crash.
 */
export const FOLLOW_AFTER_WAL_BYTES = 128 * 1024 * 1024;

/**
 * Heap bounds of each thread, MiB. They hold a few prepared statements and one
 * batch at a time; a small young generation keeps their resident memory small
 * (each thread is a V8 isolate of its own). The old generation is far above
 * what they use: running out of it would end the thread, failing every append.
 */
const THREAD_HEAP = { maxYoungGenerationSizeMb: 2, maxOldGenerationSizeMb: 256 };

/** An error from the writer thread, with SQLite's code (`SQLITE_FULL`, …) so failure kinds still apply. */
class WriterError extends Error {
  constructor(
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'SqliteError';
  }
}

/**
 * How to start the thread: the compiled `writer-thread.js` beside this file,
 * or, when this module runs from its TypeScript source (tests, `npm run dev`),
 * a bootstrap that registers tsx in the new thread and imports
 * `writer-thread.ts` (a worker does not apply `--import` loaders on Node 20).
 */
function threadEntry(): { entry: URL | string; eval: boolean } {
  if (!import.meta.url.endsWith('.ts')) return { entry: new URL('./writer-thread.js', import.meta.url), eval: false };
  const tsxDir = dirname(createRequire(import.meta.url).resolve('tsx/package.json'));
  const tsx = pathToFileURL(join(tsxDir, 'dist/esm/api/index.mjs')).href;
  const thread = new URL('./writer-thread.ts', import.meta.url).href;
  return {
    entry: `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(thread)}); })`,
    eval: true,
  };
}

/** One thread (writer or checkpointer) and its request/reply bookkeeping. */
class Thread {
  private readonly worker: Worker;
  private readonly ready: Promise<void>;
  private closed: (() => void) | undefined;
  /** The one close in progress or done: a second `close()` waits for the same one. */
  private closing: Promise<void> | undefined;
  private exited = false;
  /**
   * Per batch handed over: settled with the earlier messages found (`hits`), or none once
   * committed; with the batch's latest-send marks when it has any.
   */
  readonly waiting = new Map<
    number,
    { resolve(hits: unknown[] | undefined): void; reject(err: Error): void; marks: readonly LastSendMark[] | undefined }
  >();
  /** Called as a batch with marks is reported committed, before its promise settles. */
  onCommitted: (id: number, marks: readonly LastSendMark[]) => void = () => {};
  /** Called as the writer reports every mark of the batches up to `through` applied. */
  onApplied: (through: number) => void = () => {};
  /** Called as the thread reports a pause beside its commits (`writer-timings.ts`), ms. */
  onPause: (reason: WriterPauseReason, ms: number) => void = () => {};
  /** Called as the thread reports a batch of messages committed: its time on it, ms. */
  onCommitMs: (ms: number) => void = () => {};

  constructor(init: WriterInit) {
    const start = threadEntry();
    this.worker = new Worker(start.entry, { workerData: init, eval: start.eval, resourceLimits: THREAD_HEAP });
    this.ready = new Promise((resolve, reject) => {
      this.worker.on('message', (m: WriterReply) => {
        if (m.kind === 'ready') resolve();
        else if (m.kind === 'open-failed') reject(new WriterError(m.code, m.message));
        else if (m.kind === 'done') {
          this.onCommitMs(m.commitMs);
          const w = this.settle(m.id);
          if (w?.marks) this.onCommitted(m.id, w.marks);
          w?.resolve(undefined);
        } else if (m.kind === 'applied') {
          if (m.ms !== undefined) this.onPause('marks', m.ms);
          this.onApplied(m.through);
        } else if (m.kind === 'followed') this.onPause('wal_restart', m.ms);
        else if (m.kind === 'hits') this.settle(m.id)?.resolve(m.hits);
        else if (m.kind === 'events') this.settle(m.id)?.resolve(m.stored);
        else if (m.kind === 'failed') this.settle(m.id)?.reject(new WriterError(m.code, m.message));
        else if (m.kind === 'closed') this.closed?.();
      });
      this.worker.on('error', (err) => {
        reject(err);
        this.failAll(err);
      });
      this.worker.on('exit', (code) => {
        this.exited = true;
        const err = new WriterError('SQLITE_WRITER_EXIT', `the SQLite writer thread exited (code ${code})`);
        reject(err);
        this.failAll(err);
        this.closed?.();
      });
    });
  }

  start(): Promise<void> {
    return this.ready;
  }

  post(m: WriterRequest, transfer?: ArrayBuffer[]): void {
    this.worker.postMessage(m, transfer);
  }

  close(): Promise<void> {
    return (this.closing ??= this.closeOnce());
  }

  private async closeOnce(): Promise<void> {
    // A thread that has exited never answers `close`.
    if (this.exited) return;
    const done = new Promise<void>((resolve) => (this.closed = resolve));
    this.post({ kind: 'close' });
    await done;
    await this.worker.terminate();
  }

  private settle(id: number) {
    const w = this.waiting.get(id);
    this.waiting.delete(id);
    return w;
  }

  private failAll(err: Error): void {
    for (const w of this.waiting.values()) w.reject(err);
    this.waiting.clear();
  }
}

/**
 * The embedded store's message writer: a worker thread owning the connection
 * that appends messages, and a second one that checkpoints the WAL. The event
 * loop only hands a batch over and later resolves its promise; the commit, its
 * fsync (`sync: 'full'`) and checkpoints run on those threads. A batch's
 * promise resolves only after its transaction is durable.
 */
export class SqliteWriter {
  private nextId = 1;
  /** When a batch last committed, `performance.now()` ms (-Infinity before the first). */
  lastCommitAt = -Infinity;
  /**
   * The marks of committed batches the writer thread has not applied to `memberships` yet
   * (they wait in `pending_marks`), oldest batch first. Kept as the batches' own arrays: a
   * commit adds one entry whatever its marks, and only a read of memberships looks inside.
   */
  private unapplied: { batch: number; marks: readonly LastSendMark[] }[] = [];
  /** Raised whenever marks leave `unapplied` (applied to `memberships`): see `readWithMarks`. */
  private applies = 0;
  /**
   * The marks of `unapplied` by uid, oldest first: built by the first read that needs it and
   * dropped whenever `unapplied` changes, so a read looks only at its own user's marks (a
   * catch-up right after many sends reads memberships once per page while tens of thousands
   * of marks wait to be applied).
   */
  private unappliedByUid: Map<string, LastSendMark[]> | undefined;
  /** What the writer thread reports of its time: each commit's duration, and its pauses beside them while batches waited. */
  readonly timings = new WriterTimings();

  /** The events appended since the last hand-over, and who waits for each. */
  private events:
    | {
        values: unknown[];
        waiting: { event: Omit<MessageEvent, 'eventSeq' | 'createdAt'>; resolve(e: MessageEvent): void; reject(err: Error): void }[];
      }
    | undefined;

  private constructor(
    private readonly writer: Thread,
    private readonly checkpointer: Thread,
    private readonly health: WriteHealth,
  ) {
    writer.onCommitted = (id, marks) => {
      this.unapplied.push({ batch: id, marks });
      if (marks.length > 0) this.unappliedByUid = undefined;
    };
    writer.onPause = (reason, ms) => this.timings.pause(reason, ms);
    writer.onCommitMs = (ms) => this.timings.commit(ms);
    writer.onApplied = (through) => {
      this.applies++;
      let n = 0;
      while (n < this.unapplied.length && this.unapplied[n]!.batch <= through) n++;
      if (n > 0) {
        this.unapplied = this.unapplied.slice(n);
        this.unappliedByUid = undefined;
      }
    };
  }

  /**
   * Runs a read of one user's memberships and raises the `lastSendSeq` of every row it
   * returns to that user's marks not applied yet. A mark leaves `unapplied` only once
   * `memberships` holds it; when that happened while the read ran (the read may have seen
   * the table before), it runs again.
   */
  async readWithMarks<T extends { channelId: string; channelType: number; lastSendSeq: number }>(
    uid: string,
    read: () => Promise<T[]>,
  ): Promise<T[]> {
    for (;;) {
      const applies = this.applies;
      const rows = await read();
      if (applies !== this.applies) continue;
      if (rows.length === 0 || this.unapplied.length === 0) return rows;
      const marks = (this.unappliedByUid ??= this.indexUnapplied()).get(uid);
      if (marks === undefined) return rows;
      for (const m of marks) {
        for (const r of rows) {
          if (r.channelId === m.channelId && r.channelType === m.channelType && r.lastSendSeq < m.seq) r.lastSendSeq = m.seq;
        }
      }
      return rows;
    }
  }

  /** The marks of `unapplied` by uid, each user's oldest first. */
  private indexUnapplied(): Map<string, LastSendMark[]> {
    const byUid = new Map<string, LastSendMark[]>();
    for (const b of this.unapplied) {
      for (const m of b.marks) {
        const mine = byUid.get(m.uid);
        if (mine === undefined) byUid.set(m.uid, [m]);
        else mine.push(m);
      }
    }
    return byUid;
  }

  /** Starts both threads on `file` (which must already hold the schema). */
  static async start(
    file: string,
    sync: 'full' | 'normal',
    health: WriteHealth,
    markApplyMs = MARK_APPLY_MS,
    walBuffer = false,
  ): Promise<SqliteWriter> {
    if (!Number.isInteger(markApplyMs) || markApplyMs < 1 || markApplyMs > 2 ** 31 - 1) {
      throw new RangeError(`markApplyMs must be a whole number of milliseconds from 1 to ${2 ** 31 - 1}, got ${markApplyMs}`);
    }
    const base = {
      file,
      sync,
      busyTimeoutMs: BUSY_TIMEOUT_MS,
      checkpointEveryMs: CHECKPOINT_EVERY_MS,
      markApplyMs,
      walSizeLimitBytes: WAL_SIZE_LIMIT_BYTES,
      followAfterWalBytes: FOLLOW_AFTER_WAL_BYTES,
      walBuffer,
      signal: new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT),
    };
    const writer = new Thread({ ...base, role: 'writer' });
    const checkpointer = new Thread({ ...base, role: 'checkpointer' });
    try {
      await Promise.all([writer.start(), checkpointer.start()]);
    } catch (err) {
      await Promise.allSettled([writer.close(), checkpointer.close()]);
      throw err;
    }
    return new SqliteWriter(writer, checkpointer, health);
  }

  /** Commits messages, latest-send marks and `members` (made sure of, before the rows) in one transaction; resolves once durable. */
  async appendBatch(rows: readonly StoredMessage[], marks: readonly LastSendMark[], members: readonly EnsuredMember[] = []): Promise<void> {
    await this.handOver(rows, marks, members, false);
  }

  /**
   * The same, but first, in the same transaction, looks up the idempotency key
   * `(channel, from_uid, client_msg_no)` of every row that has one. When none
   * was committed before it commits and resolves to `[]` once durable; else it
   * writes nothing and resolves to the earlier messages found. `members` are
   * made sure of in the same transaction, before the rows.
   */
  async appendBatchChecked(
    rows: readonly StoredMessage[],
    marks: readonly LastSendMark[],
    members: readonly EnsuredMember[] = [],
  ): Promise<IdempotentHit[]> {
    const flat = await this.handOver(rows, marks, members, true);
    const hits: IdempotentHit[] = [];
    if (!flat) return hits;
    for (let i = 0; i < flat.length; i += HIT_FIELDS) {
      hits.push({
        channelId: flat[i] as string,
        channelType: flat[i + 1] as number,
        fromUid: flat[i + 2] as string,
        clientMsgNo: flat[i + 3] as string,
        messageId: BigInt(flat[i + 4] as string),
        messageSeq: Number(flat[i + 5]),
        payload: flat[i + 6] as Uint8Array,
      });
    }
    return hits;
  }

  private async handOver(
    rows: readonly StoredMessage[],
    marks: readonly LastSendMark[],
    members: readonly EnsuredMember[],
    check: boolean,
  ): Promise<unknown[] | undefined> {
    // The payloads are copied into one buffer of the batch's own, transferred: a payload that is a
    // view (Node's shared allocation pool, a packet's bytes) would otherwise have its whole backing
    // ArrayBuffer copied by the structured clone, once per distinct buffer and batch. Each message
    // carries its payload's length, not a view: a view is a host object to the structured clone
    // (its buffer, offset and length looked up through V8's API, a new view made on the other side).
    let bytes = 0;
    for (const m of rows) bytes += m.payload.byteLength;
    const payloads = new Uint8Array(bytes);
    const messages: unknown[] = [];
    let at = 0;
    for (const m of rows) {
      const n = m.payload.byteLength;
      payloads.set(m.payload, at);
      messages.push(
        m.channelId,
        m.channelType,
        m.messageSeq,
        m.messageId,
        m.clientMsgNo,
        m.fromUid,
        m.setting,
        m.flags,
        m.expire,
        m.topic,
        m.createdAt,
        n, // payload: the writer thread makes the view of payloads[at, at + n)
        null, // idem_hash: filled by the writer thread
      );
      at += n;
    }
    const flat: unknown[] = [];
    for (const k of marks) flat.push(k.channelId, k.channelType, k.uid, k.seq);
    const ensured: unknown[] = [];
    if (members.length > 0) {
      const now = Date.now();
      for (const e of members) ensured.push(e.channelId, e.channelType, e.uid, now);
    }
    const id = this.nextId++;
    const hits = await this.request(
      { kind: 'append', id, messages, payloads: payloads.buffer, marks: flat, members: ensured, check },
      marks.length > 0 ? marks : undefined,
      [payloads.buffer],
    );
    // A transaction that found earlier messages wrote nothing: it proves no write works again.
    if (hits) return hits;
    this.committed();
    return undefined;
  }

  /** Hands `m` to the writer thread and waits for its answer; a failure is reported to write health. */
  private async request(
    m: WriterRequest & { id: number },
    marks: readonly LastSendMark[] | undefined,
    transfer?: ArrayBuffer[],
  ): Promise<unknown[] | undefined> {
    try {
      return await new Promise<unknown[] | undefined>((resolve, reject) => {
        this.writer.waiting.set(m.id, { resolve, reject, marks });
        this.writer.post(m, transfer);
      });
    } catch (err) {
      this.health.failed(err);
      throw err;
    }
  }

  /** A transaction the writer thread committed: the store can write (see `embedded.ts`' write probe). */
  private committed(): void {
    this.lastCommitAt = performance.now();
    if (this.health.failing) this.health.succeeded();
  }

  /**
   * Appends a stream event of a message (numbered after the message's last, or the stored one when
   * the message has an event with its id); resolves once durable. The events appended in one turn of
   * the event loop are handed over together and commit in one transaction, in the order appended.
   */
  appendEvent(e: Omit<MessageEvent, 'eventSeq' | 'createdAt'>): Promise<MessageEvent> {
    let batch = this.events;
    if (!batch) {
      batch = this.events = { values: [], waiting: [] };
      setImmediate(() => this.handOverEvents());
    }
    batch.values.push(
      e.channelId,
      e.channelType,
      e.clientMsgNo,
      e.eventId,
      e.eventKey,
      e.eventType,
      e.fromUid,
      e.messageId,
      e.visibility,
      e.occurredAt,
      e.payload,
    );
    const waiting = batch.waiting;
    return new Promise((resolve, reject) => waiting.push({ event: e, resolve, reject }));
  }

  private handOverEvents(): void {
    const batch = this.events;
    if (!batch) return;
    this.events = undefined;
    this.request({ kind: 'events', id: this.nextId++, events: batch.values }, undefined).then(
      (stored) => {
        this.committed();
        batch.waiting.forEach((w, i) => {
          const at = i * STORED_EVENT_FIELDS;
          w.resolve({
            channelId: w.event.channelId,
            channelType: w.event.channelType,
            clientMsgNo: w.event.clientMsgNo,
            eventId: w.event.eventId,
            eventSeq: stored![at] as number,
            eventKey: stored![at + 1] as string,
            eventType: stored![at + 2] as string,
            fromUid: stored![at + 3] as string,
            messageId: BigInt(stored![at + 4] as string),
            visibility: stored![at + 5] as string,
            occurredAt: stored![at + 6] as number,
            payload: stored![at + 7] as string,
            createdAt: stored![at + 8] as number,
          });
        });
      },
      (err: Error) => {
        for (const w of batch.waiting) w.reject(err);
      },
    );
  }

  /** Stops both threads after the batches already handed over (and the events appended so far) are settled. */
  async close(): Promise<void> {
    this.handOverEvents();
    await Promise.allSettled([this.writer.close(), this.checkpointer.close()]);
  }
}
