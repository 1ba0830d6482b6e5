import { performance } from 'node:perf_hooks';
import { Buffer } from 'node:buffer';
import type { AppendFence, EnsuredMember, IdempotentHit, LastSendMark, MessageRepository, StoredMessage } from '@parley/store';

/** A message ready to be sequenced: everything but its seq. */
export type NewMessage = Omit<StoredMessage, 'messageSeq'>;

export type AppendResult =
  | { kind: 'appended'; messageId: bigint; messageSeq: number }
  | { kind: 'duplicate'; messageId: bigint; messageSeq: number }
  | { kind: 'conflict' };

/** Figures the operations surface reads. */
export interface AppendStats {
  batches: number;
  rows: number;
  /** Durations of recent commits, ms. */
  lastCommitMs: number;
}

/** One settled append as the operations surface sees it (diagnostics, latency). */
export interface CommitRecord {
  message: NewMessage;
  result: AppendResult;
  /** Enqueue to durable (or settled), ms. */
  waitMs: number;
}

/** Called after each committed batch with its transaction time, ms, and every request it settled. */
export type CommitObserver = (commitMs: number, records: readonly CommitRecord[]) => void;

function channelKey(channelId: string, channelType: number): string {
  return `${channelType}:${channelId}`;
}

function idemKeyIn(channel: string, fromUid: string, clientMsgNo: string): string {
  return `${channel}\u0000${fromUid}\u0000${clientMsgNo}`;
}

function idemKey(m: Pick<NewMessage, 'channelId' | 'channelType' | 'fromUid' | 'clientMsgNo'>): string {
  return idemKeyIn(channelKey(m.channelId, m.channelType), m.fromUid, m.clientMsgNo);
}

/**
 * The row of a sequenced message, written out field by field in the
 * columns' order. Not `{ ...m, messageSeq }`: V8 gives each object an object
 * spread makes and then adds a field to a hidden class of its own, so every
 * read of the row's twelve fields when the store hands a batch over (the
 * writer thread's flat array) missed its inline cache and went through the
 * runtime (12 megamorphic misses per message, about a third of the send
 * path's main-thread instructions). Built here, every row has one shape,
 * whatever the key order of the `NewMessage` it came from.
 */
export function storedRow(m: NewMessage, messageSeq: number): StoredMessage {
  return {
    channelId: m.channelId,
    channelType: m.channelType,
    messageSeq,
    messageId: m.messageId,
    clientMsgNo: m.clientMsgNo,
    fromUid: m.fromUid,
    setting: m.setting,
    flags: m.flags,
    expire: m.expire,
    topic: m.topic,
    createdAt: m.createdAt,
    payload: m.payload,
  };
}

/**
 * A settle callback that threw (a bug: they must not) is thrown again on its
 * own, like an exception in a promise reaction, not into the batch loop,
 * where it would fail the batch's other, durable sends.
 */
function rethrowLater(err: unknown): void {
  queueMicrotask(() => {
    throw err;
  });
}

/**
 * One queued send. Its channel and idempotency keys are built once, on first
 * use, and its outcome is kept on it while its batch is planned (no per-batch
 * map from send to outcome).
 */
class Pending {
  /** Set by `plan`: the result, or the earlier send of the same batch this one repeats. */
  outcome: AppendResult | Pending | undefined = undefined;
  /** Set by `commit`: the send's channel in its batch. */
  batchChannel: BatchChannel | undefined = undefined;
  /** Resolved or rejected (callbacks, unlike a promise's, must not run twice). */
  private done = false;
  private channelKey: string | undefined = undefined;
  private idemKey: string | undefined = undefined;

  constructor(
    readonly message: NewMessage,
    /** Mark the sender's latest send (ordinary messages, not command logs). */
    readonly markSend: boolean,
    /** `performance.now()` at enqueue, for the enqueue-to-durable wait. */
    readonly at: number,
    private readonly onSettled: (result: AppendResult) => void,
    private readonly onFailed: (err: unknown) => void,
    /** Queued by `append`: its callbacks settle a promise, whose sender resumes a microtask later. */
    readonly viaPromise: boolean,
    /** Memberships to make sure of before the message is stored (a new person channel's participants). */
    readonly members: readonly EnsuredMember[] | undefined,
  ) {}

  /** `resolve` a microtask from now (the result is the send's from this moment on). */
  resolveLater(result: AppendResult): void {
    if (this.done) return;
    this.done = true;
    queueMicrotask(() => this.settle(result));
  }

  /** Hands the send its result (once: a later `reject` of the same send does nothing). */
  resolve(result: AppendResult): void {
    if (this.done) return;
    this.done = true;
    this.settle(result);
  }

  private settle(result: AppendResult): void {
    try {
      this.onSettled(result);
    } catch (err) {
      rethrowLater(err);
    }
  }

  /** Hands the send its failure (once: nothing after its result). */
  reject(err: unknown): void {
    if (this.done) return;
    this.done = true;
    try {
      this.onFailed(err);
    } catch (thrown) {
      rethrowLater(thrown);
    }
  }

  /** `channelKey` of the message's channel. */
  get channel(): string {
    return (this.channelKey ??= channelKey(this.message.channelId, this.message.channelType));
  }

  /** `idemKey` of the message, or '' when it has none (no client_msg_no or no sender). */
  get idem(): string {
    if (this.idemKey === undefined) {
      const m = this.message;
      this.idemKey = m.clientMsgNo !== '' && m.fromUid !== '' ? idemKeyIn(this.channel, m.fromUid, m.clientMsgNo) : '';
    }
    return this.idemKey;
  }
}

/** A channel's committed tail as this node holds it. */
interface ChannelTail {
  readonly channelId: string;
  readonly channelType: number;
  /** The last durable seq (0 for an empty channel). */
  tail: number;
  /** The channel in the batch being committed, while one is. */
  planning: BatchChannel | undefined;
}

/** A send's idempotency key within its channel. */
function senderMsgKey(m: NewMessage): string {
  return `${m.fromUid}\u0000${m.clientMsgNo}`;
}

/** Keyed sends or marks of one channel in one batch are looked up in a list up to this many, by a map past it. */
const LINEAR_LOOKUPS = 8;

/**
 * One channel of the batch being committed: its tail when the batch started,
 * the seq `plan` has reached, and the sends and marks `plan` has taken in it.
 * Every send of the batch points at its channel's, so `plan` reaches each
 * send's state without a map: a map keyed per message would hash a new string
 * per message (its idempotency key, its mark's key). A repeat of an
 * idempotency key or a mark's sender is looked for among this channel's sends
 * alone, of which a 1:1 channel's batch usually has one.
 */
class BatchChannel {
  /** The last seq `plan` gave in this channel. */
  next: number;
  /** Sends of this channel in this batch with an idempotency key that `plan` appends. */
  private readonly keyed: Pending[] = [];
  /** `keyed` by sender and client_msg_no, once it is longer than `LINEAR_LOOKUPS`. */
  private keyedBy: Map<string, Pending> | undefined = undefined;
  /** The latest-send mark of each sender of this channel in this batch. */
  readonly marks: LastSendMark[] = [];
  /** `marks` by sender, once it is longer than `LINEAR_LOOKUPS`. */
  private marksBy: Map<string, LastSendMark> | undefined = undefined;

  constructor(
    /** The channel's tail when the batch started (set once loaded, for a channel this node did not hold). */
    public start: number,
    /** Where this node holds the channel's tail; undefined for a channel it did not hold. */
    readonly held: ChannelTail | undefined,
    /** A send of the batch in this channel (its id and type, to load the tail). */
    readonly first: NewMessage,
  ) {
    this.next = start;
  }

  /** Forgets what a previous `plan` of the batch took. */
  reset(): void {
    this.next = this.start;
    this.keyed.length = 0;
    this.keyedBy = undefined;
    this.marks.length = 0;
    this.marksBy = undefined;
  }

  /** The send this batch appends under `m`'s idempotency key in this channel, if any. */
  keyedSend(m: NewMessage): Pending | undefined {
    if (this.keyedBy !== undefined) return this.keyedBy.get(senderMsgKey(m));
    for (const q of this.keyed) if (q.message.clientMsgNo === m.clientMsgNo && q.message.fromUid === m.fromUid) return q;
    return undefined;
  }

  /** Records `p` (with an idempotency key) as appended. */
  addKeyed(p: Pending): void {
    this.keyed.push(p);
    if (this.keyedBy !== undefined) this.keyedBy.set(senderMsgKey(p.message), p);
    else if (this.keyed.length > LINEAR_LOOKUPS) {
      this.keyedBy = new Map();
      for (const q of this.keyed) this.keyedBy.set(senderMsgKey(q.message), q);
    }
  }

  /** Marks `m`'s sender's latest send in this channel at `seq`. */
  mark(m: NewMessage, seq: number): void {
    const uid = m.fromUid;
    let known = this.marksBy?.get(uid);
    if (this.marksBy === undefined) for (const k of this.marks) if (k.uid === uid) known = k;
    if (known !== undefined) {
      known.seq = seq;
      return;
    }
    const mark: LastSendMark = { channelId: m.channelId, channelType: m.channelType, uid, seq };
    this.marks.push(mark);
    if (this.marksBy !== undefined) this.marksBy.set(uid, mark);
    else if (this.marks.length > LINEAR_LOOKUPS) this.marksBy = new Map(this.marks.map((k) => [k.uid, k]));
  }
}

/** An earlier durable message under an idempotency key. */
type EarlierMessage = Pick<IdempotentHit, 'messageId' | 'messageSeq' | 'payload'>;

/**
 * The memberships a batch's sends bring (new person channels' participants), each once: several
 * sends of one new channel in one batch each bring the same pair. Undefined when none does.
 */
function membersOf(batch: readonly Pending[]): EnsuredMember[] | undefined {
  let members: EnsuredMember[] | undefined;
  let seen: Set<string> | undefined;
  for (const p of batch) {
    if (!p.members) continue;
    members ??= [];
    seen ??= new Set();
    for (const m of p.members) {
      const key = `${m.channelType}:${m.channelId}\u0000${m.uid}`;
      if (seen.has(key)) continue;
      seen.add(key);
      members.push(m);
    }
  }
  return members;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.compare(a, b) === 0;
}

/**
 * Longest spacing between the starts of two commits, ms. A send arriving when
 * the previous commit started longer ago than the window is committed at
 * once, so low rates pay no wait.
 *
 * Each commit has a fixed cost besides its rows (the hand-over to the writer
 * thread and back, the transaction's locks and WAL header, the sequential index
 * tails, the fsync, and on the main thread the turn that settles the batch), so
 * the fewer commits a rate needs, the less CPU each message costs. Measured in
 * the 1:1 bench at 5k msg/s (alternated, server CPU per 1k messages): 4 ms
 * windows (20 sends per commit) 75.6-76.8 ms over JSON-RPC and 93.6-97.2 over
 * WKProto, 8 ms windows (40 sends) 63.2-65.6 and 80.0-80.4 — a sixth less on the
 * main thread and a quarter less on the writer's — with sendack p99 10-15 ms
 * against 7-13; 10 ms windows saved nothing more and let p99 reach 31 ms. But
 * over WKProto, whose main thread does more per message, 8 ms left p99 at 5k
 * msg/s above 20 ms in three runs of eight (19.1-21.2 ms); 6 ms windows (30
 * sends) measured 13.5-15.6 ms there and 8.5-9.3 over JSON-RPC (8 ms: 10.3-11.2)
 * at a few percent more CPU (alternated, a noisy hour: JSON-RPC 81.2-84.0
 * against 69.6-81.6 ms per 1k, WKProto 93.6-105.2 against 92.8-103.2).
 */
export const COMMIT_WINDOW_MS = 6;

/**
 * Messages a commit aims to carry at high rates. The window is the time the
 * recent arrival rate takes to bring this many, never more than
 * `COMMIT_WINDOW_MS`: from 16k msg/s up shorter than 6 ms, so that higher
 * rates still share an fsync among as many sends while waiting less.
 */
export const COMMIT_TARGET_ROWS = 96;

/**
 * At moderate rates the window also lasts until `COMMIT_MIN_ROWS` sends have
 * come, up to `COMMIT_MAX_WINDOW_MS`: 8 ms up to 3k msg/s, 6 ms from 4k. A
 * lighter load leaves the tail room for it, and there each commit's fixed cost
 * weighs most (at 2k msg/s, 4 ms windows cost 149-178 ms of server CPU per 1k
 * messages and 8 ms ones 127-133, last round's bench).
 */
export const COMMIT_MIN_ROWS = 24;
export const COMMIT_MAX_WINDOW_MS = 8;

/**
 * The spacing the committer keeps between commit starts, ms, for an arrival
 * rate in messages per ms (0: unknown or idle, the plain window).
 */
export function commitWindowMs(arrivalsPerMs: number, windowMs = COMMIT_WINDOW_MS): number {
  if (!(arrivalsPerMs > 0)) return windowMs;
  const highRate = Math.min(windowMs, COMMIT_TARGET_ROWS / arrivalsPerMs);
  const moderate = Math.min(COMMIT_MAX_WINDOW_MS, COMMIT_MIN_ROWS / arrivalsPerMs);
  return Math.max(highRate, moderate);
}

/**
 * A window also ends early once sends stop arriving for this long, ms: the
 * longer of `COMMIT_QUIET_MIN_MS` and the time `COMMIT_QUIET_ARRIVALS` sends
 * take at the recent rate. Waiting helps only while more sends are coming.
 * Senders that keep a fixed number of sends in flight (a backend posting with
 * 16 requests at a time) send nothing more until their sends are acknowledged,
 * so a full window would only add its wait to every round trip and cut their
 * throughput; sends from many independent senders keep arriving, and a pause
 * of several of their mean spacings is rare (at 2k msg/s of independent sends
 * a 3 ms pause follows one send in 400). Shorter pauses (2 ms) also ended
 * windows whenever the sending machine was busy: in the 1:1 bench on a loaded
 * host the commits at 2k msg/s rose from 132 to 220 a second.
 */
export const COMMIT_QUIET_MIN_MS = 3;
export const COMMIT_QUIET_ARRIVALS = 6;

/** How long a pause in arrivals ends the window, ms, for an arrival rate in messages per ms. */
export function commitQuietMs(arrivalsPerMs: number): number {
  if (!(arrivalsPerMs > 0)) return COMMIT_QUIET_MIN_MS;
  return Math.max(COMMIT_QUIET_MIN_MS, COMMIT_QUIET_ARRIVALS / arrivalsPerMs);
}

/**
 * A window also ends at once when as many sends wait as recent commits
 * carried. Senders with a fixed number in flight send that many again after
 * each acknowledgement, and with all of them queued nothing more comes until
 * they are committed; sends from independent senders reach that count about
 * when the window ends anyway. "Recent commits" is the largest batch, decaying
 * by `COMMIT_REFILL_DECAY` per commit, so that a client that lowers its
 * concurrency is followed within a few commits. Measured (sync full): one
 * JSON-RPC client with 16 sends in flight 4.3k msgs/s with the earlier 4 ms
 * window, 1.8k with an 8 ms one alone, 6.2k when this also waited for a 1 ms
 * pause, 15.2k committing at once; six such clients 26.9k, 8.8k, 20.9k, 27.1k;
 * the store's append-path bench with 20 in flight 4.7-5.0k, 2.5k, 10.3k,
 * 26.0-27.9k msgs/s. What it may cost: a window whose sends came slower than
 * usual lowers the count by a tenth, and the next windows then commit at the
 * lower count; in the 1:1 bench (its generator sends in bursts about 1.1 ms
 * apart) at 5k msg/s commits rose from 137 to 148 a second, at 2k not at all.
 */
export const COMMIT_REFILL_DECAY = 0.9;

/**
 * Most characters of channel ids the held tails may keep (besides their count, `maxTails`), the
 * oldest dropped first past it: a WKProto client may name ids of up to 32,767 bytes, so the count
 * alone bounds nothing.
 */
export const TAIL_CHARS_MAX = 8_000_000;

/**
 * The channel sequencer and group committer. Sends are queued and committed
 * together: per batch one idempotency look-up, one transaction for all rows.
 * A send's promise settles only after its row is durable, so an acknowledged
 * message survives a crash. Batches run one at a time, which makes this
 * process the single writer of every channel tail it holds.
 */
export class AppendQueue {
  private queue: Pending[] = [];
  private flushing = false;
  private scheduled = false;
  /**
   * The channel tails this node holds, by channel type, then id: a send's
   * look-up hashes no key string of its own (its channel id's hash is already
   * known from the permission check's look-up of the same string).
   */
  private readonly tails = new Map<number, Map<string, ChannelTail>>();
  /** The same tails in the order they were first held (the oldest is dropped first past `maxTails` or `maxTailChars`). */
  private readonly tailOrder = new Set<ChannelTail>();
  /** Characters of the held tails' channel ids. */
  private tailChars = 0;
  private peakDepth = 0;
  private lastCommitStart = -Infinity;
  /** Arrivals per ms, smoothed over recent commits. */
  private arrivalRate = 0;
  private arrivedSinceCommit = 0;
  /** `performance.now()` of the latest send queued. */
  private lastArrivalAt = -Infinity;
  /** The largest recent batch, decaying per commit (`COMMIT_REFILL_DECAY`). */
  private refillRows = 0;
  /** The timer of the commit this queue waits for, while one is set. */
  private timer: NodeJS.Timeout | undefined;
  readonly stats: AppendStats = { batches: 0, rows: 0, lastCommitMs: 0 };
  /** Set by the operations collector; unset costs nothing. */
  onCommit: CommitObserver | undefined;
  /**
   * Cluster mode: the slot lease fence of a channel, read when its batch
   * commits. The batch's transaction checks the epoch of every slot it writes
   * to; when one was taken over the whole batch fails, writing nothing, and
   * each sender is routed again (to the new owner, or here once more).
   */
  fenceOf: ((channelId: string) => AppendFence) | undefined;

  constructor(
    private readonly messages: MessageRepository,
    private readonly maxRows: number,
    private readonly maxTails = 100_000,
    private readonly windowMs = COMMIT_WINDOW_MS,
    private readonly maxTailChars = TAIL_CHARS_MAX,
  ) {}

  /** Messages waiting for the next commit. */
  get depth(): number {
    return this.queue.length;
  }

  /**
   * The deepest the queue has been since the previous call (at least its depth
   * now), so a burst committed between two top samples still shows; starts the
   * next period.
   */
  takePeakDepth(): number {
    const peak = Math.max(this.peakDepth, this.queue.length);
    this.peakDepth = this.queue.length;
    return peak;
  }

  /** Channels whose tail this node holds in memory (the channels it is actively sequencing). */
  get activeChannels(): number {
    return this.tailOrder.size;
  }

  /**
   * Queues `message`; resolves once it is durable (or found under its idempotency key). `members`
   * (a new person channel's participants) exist once it resolves: every store creates them in the
   * batch's own transaction.
   */
  append(message: NewMessage, markSend: boolean, members?: readonly EnsuredMember[]): Promise<AppendResult> {
    return new Promise((resolve, reject) =>
      this.enqueue(new Pending(message, markSend, performance.now(), resolve, reject, true, members)),
    );
  }

  /**
   * `append` without a promise: `settled` gets the result once the message is
   * durable (or found under its idempotency key), `failed` the error of a
   * failed batch; exactly one of them is called, once, after the commit (in
   * the same turn as the rest of its batch). Neither may throw. The send path
   * uses this so that a message waiting for its commit holds no promise,
   * resolving functions or suspended async frames (less to allocate, and less
   * for each scavenge to copy while commits are in flight).
   */
  appendThen(
    message: NewMessage,
    markSend: boolean,
    settled: (result: AppendResult) => void,
    failed: (err: unknown) => void,
    members?: readonly EnsuredMember[],
  ): void {
    this.enqueue(new Pending(message, markSend, performance.now(), settled, failed, false, members));
  }

  private enqueue(p: Pending): void {
    this.queue.push(p);
    this.arrivedSinceCommit++;
    this.lastArrivalAt = p.at;
    // The queue just refilled to the count of recent commits: commit now.
    if (this.timer !== undefined && this.full()) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.arm();
    }
    if (this.queue.length > this.peakDepth) this.peakDepth = this.queue.length;
    this.schedule();
  }

  /** The committed tail of a channel (0 for an empty one). */
  async tail(channelId: string, channelType: number): Promise<number> {
    const known = this.heldTail(channelId, channelType);
    if (known !== undefined) return known.tail;
    const loaded = await this.messages.loadTail(channelId, channelType);
    return this.heldTail(channelId, channelType)?.tail ?? loaded;
  }

  /**
   * Drops the remembered tails of the channels `which` selects, so their next
   * append reads the tail from the store (cluster mode: a slot changed owner).
   */
  forgetTails(which: (channelId: string, channelType: number) => boolean): void {
    for (const t of [...this.tailOrder]) if (which(t.channelId, t.channelType)) this.dropTail(t);
  }

  /** Resolves once everything queued so far is committed or failed. */
  async drain(): Promise<void> {
    while (this.queue.length > 0 || this.flushing) await new Promise((r) => setImmediate(r));
  }

  private schedule(): void {
    if (this.scheduled || this.flushing) return;
    this.scheduled = true;
    this.arm();
  }

  /**
   * Commits at the end of the window, once arrivals have paused for the quiet
   * time, or as soon as the queue holds as many sends as recent commits,
   * whichever comes first; a timer that finds sends still arriving waits
   * again (at most until the window's end).
   */
  private arm(): void {
    const wait = this.untilCommitMs();
    if (wait < 1) setImmediate(this.run);
    else this.timer = setTimeout(this.onTimer, wait);
  }

  /** Whether the queue holds a whole batch, or as many sends as recent commits carried: no reason to wait. */
  private full(): boolean {
    return this.queue.length >= this.maxRows || this.queue.length >= this.refillRows;
  }

  /** How long the queued sends still wait for their commit, ms (0 or less: commit now). */
  private untilCommitMs(): number {
    if (this.full()) return 0;
    const windowEnd = this.lastCommitStart + commitWindowMs(this.arrivalRate, this.windowMs);
    const quietEnd = this.lastArrivalAt + commitQuietMs(this.arrivalRate);
    return Math.min(windowEnd, quietEnd) - performance.now();
  }

  private readonly run = (): void => {
    this.scheduled = false;
    void this.flush();
  };

  private readonly onTimer = (): void => {
    this.timer = undefined;
    this.arm();
  };

  private async flush(): Promise<void> {
    if (this.flushing || this.queue.length === 0) return;
    this.flushing = true;
    const now = performance.now();
    const span = now - this.lastCommitStart;
    // Arrivals over the last commit interval; intervals longer than a second say the node was idle.
    if (span < 1000) this.arrivalRate = 0.7 * this.arrivalRate + (0.3 * this.arrivedSinceCommit) / Math.max(span, 0.1);
    else this.arrivalRate = 0;
    this.arrivedSinceCommit = 0;
    this.lastCommitStart = now;
    const batch = this.queue.splice(0, this.maxRows);
    this.refillRows = Math.max(batch.length, this.refillRows * COMMIT_REFILL_DECAY);
    try {
      await this.commit(batch, this.fencesOf(batch));
    } catch (err) {
      // A failed batch wrote nothing; its channels' tails are read again, in case another writer moved them.
      for (const p of batch) {
        const held = this.heldTail(p.message.channelId, p.message.channelType);
        if (held !== undefined) this.dropTail(held);
      }
      for (const p of batch) p.reject(err);
    } finally {
      this.flushing = false;
      if (this.queue.length > 0) this.schedule();
    }
  }

  /** Cluster mode: one fence per slot the batch writes to (checked together in its transaction); none otherwise. */
  private fencesOf(batch: Pending[]): AppendFence[] | undefined {
    const fenceOf = this.fenceOf;
    if (!fenceOf) return undefined;
    const bySlot = new Map<number, AppendFence>();
    for (const p of batch) {
      const fence = fenceOf(p.message.channelId);
      bySlot.set(fence.slot, fence);
    }
    return [...bySlot.values()];
  }

  private async commit(batch: Pending[], fence: AppendFence[] | undefined): Promise<void> {
    const started = performance.now();
    const channels: BatchChannel[] = [];
    let rowCount: number;
    try {
      rowCount = await this.sequence(batch, fence, channels);
    } finally {
      for (const c of channels) if (c.held !== undefined) c.held.planning = undefined;
    }
    this.stats.batches++;
    this.stats.rows += rowCount;
    const settled = performance.now();
    this.stats.lastCommitMs = settled - started;
    const records: CommitRecord[] | undefined = this.onCommit ? [] : undefined;
    // A promise's sender resumes a microtask after it is resolved: when the batch has such a send,
    // every callback settles a microtask later too, so all of them run in batch order (what each
    // does next, such as a fan-out, keeps a channel's seq order). Otherwise they run right here.
    let viaPromise = false;
    for (const p of batch) viaPromise ||= p.viaPromise;
    for (const p of batch) {
      const o = p.outcome!;
      const result: AppendResult =
        o instanceof Pending ? { ...(o.outcome as Extract<AppendResult, { kind: 'appended' }>), kind: 'duplicate' } : o;
      records?.push({ message: p.message, result, waitMs: settled - p.at });
      if (viaPromise && !p.viaPromise) p.resolveLater(result);
      else p.resolve(result);
    }
    if (records) this.onCommit!(this.stats.lastCommitMs, records);
  }

  /**
   * Sequences and writes the batch: each send's channel (in `channels`, each
   * once, in the order the batch first names them), the tails of channels this
   * node did not hold, the earlier messages under the batch's idempotency
   * keys, the rows; then the new tails. Returns how many rows it wrote.
   */
  private async sequence(batch: Pending[], fence: AppendFence[] | undefined, channels: BatchChannel[]): Promise<number> {
    let unknown: Map<string, BatchChannel> | undefined;
    for (const p of batch) {
      const held = this.heldTail(p.message.channelId, p.message.channelType);
      let c = held !== undefined ? held.planning : unknown?.get(p.channel);
      if (c === undefined) {
        c = new BatchChannel(held !== undefined ? held.tail : -1, held, p.message);
        channels.push(c);
        if (held !== undefined) held.planning = c;
        else (unknown ??= new Map()).set(p.channel, c);
      }
      p.batchChannel = c;
    }
    // Channels this node sequences for the first time (after a start, or new ones): their tails in
    // one statement, not one round trip each (a lone one by `loadTail`'s statement, compiled once).
    if (unknown) {
      const load = [...unknown.values()];
      const loaded =
        load.length === 1
          ? [await this.messages.loadTail(load[0]!.first.channelId, load[0]!.first.channelType)]
          : await this.messages.loadTails(load.map((c) => c.first));
      for (let i = 0; i < load.length; i++) load[i]!.start = loaded[i]!;
    }

    // The embedded store's writer looks the batch's idempotency keys up itself, in the commit's
    // transaction on its own connection (whose page cache holds the index pages it writes): the
    // common batch, with no earlier message under any of its keys, is one round trip. When it
    // finds some it writes nothing and the batch is planned again with them, as below.
    const checked = fence === undefined ? this.messages.appendChecked : undefined;
    const earlier = checked ? new Map<string, EarlierMessage>() : await this.findEarlier(batch);
    const members = membersOf(batch);
    let plan = this.plan(batch, channels, earlier);
    if (plan.rows.length > 0) {
      if (!checked) {
        await this.messages.appendBatch(plan.rows, plan.marks, fence, members);
      } else {
        // Each round adds at least one of the batch's keys to `earlier`, so this ends.
        for (let hits = await checked(plan.rows, plan.marks, members); hits.length > 0;) {
          for (const hit of hits) earlier.set(idemKey(hit), hit);
          plan = this.plan(batch, channels, earlier);
          hits = plan.rows.length > 0 ? await checked(plan.rows, plan.marks, members) : [];
        }
      }
    }
    for (const c of channels) {
      if (c.held !== undefined) c.held.tail = c.next;
      else this.holdTail(c.first.channelId, c.first.channelType, c.next);
    }
    this.trimTails();
    return plan.rows.length;
  }

  /**
   * Each send's outcome given the earlier durable messages under the batch's
   * idempotency keys: the rows to append (each channel's seqs from its start
   * on) and the latest-send marks; each channel's `next` is its tail after them.
   */
  private plan(batch: Pending[], channels: readonly BatchChannel[], earlier: ReadonlyMap<string, EarlierMessage>) {
    for (const c of channels) c.reset();
    const rows: StoredMessage[] = [];
    for (const p of batch) {
      const m = p.message;
      const c = p.batchChannel!;
      if (m.clientMsgNo !== '' && m.fromUid !== '') {
        const hit = earlier.size > 0 ? earlier.get(p.idem) : undefined;
        if (hit) {
          p.outcome = sameBytes(hit.payload, m.payload)
            ? { kind: 'duplicate', messageId: hit.messageId, messageSeq: hit.messageSeq }
            : { kind: 'conflict' };
          continue;
        }
        const first = c.keyedSend(m);
        if (first) {
          p.outcome = sameBytes(first.message.payload, m.payload) ? first : { kind: 'conflict' };
          continue;
        }
        c.addKeyed(p);
      }
      const seq = ++c.next;
      rows.push(storedRow(m, seq));
      p.outcome = { kind: 'appended', messageId: m.messageId, messageSeq: seq };
      if (p.markSend) c.mark(m, seq);
    }
    const marks: LastSendMark[] = [];
    for (const c of channels) for (const k of c.marks) marks.push(k);
    return { rows, marks };
  }

  /** Earlier durable messages under the batch's idempotency keys, in one look-up. */
  private async findEarlier(batch: Pending[]) {
    const keys = new Map<string, NewMessage>();
    for (const p of batch) if (p.idem !== '') keys.set(p.idem, p.message);
    const found = new Map<string, EarlierMessage>();
    if (keys.size === 0) return found;
    for (const hit of await this.messages.findByIdempotencyKeys([...keys.values()])) found.set(idemKey(hit), hit);
    return found;
  }

  /** The tail this node holds for a channel, if any. */
  private heldTail(channelId: string, channelType: number): ChannelTail | undefined {
    return this.tails.get(channelType)?.get(channelId);
  }

  /**
   * Holds a channel's tail from now on: one this node did not hold when its batch started (only
   * `sequence` adds tails, one batch at a time, so none was added since).
   */
  private holdTail(channelId: string, channelType: number, tail: number): void {
    let byId = this.tails.get(channelType);
    if (byId === undefined) this.tails.set(channelType, (byId = new Map()));
    const held: ChannelTail = { channelId, channelType, tail, planning: undefined };
    byId.set(channelId, held);
    this.tailOrder.add(held);
    this.tailChars += channelId.length;
  }

  private dropTail(t: ChannelTail): void {
    this.tails.get(t.channelType)?.delete(t.channelId);
    if (this.tailOrder.delete(t)) this.tailChars -= t.channelId.length;
  }

  private trimTails(): void {
    for (const oldest of this.tailOrder) {
      if (this.tailOrder.size <= this.maxTails && this.tailChars <= this.maxTailChars) break;
      this.dropTail(oldest);
    }
  }

  /** Tails held and the characters of their channel ids (a diagnostic; tests read it). */
  get tailsHeld(): { count: number; chars: number } {
    return { count: this.tailOrder.size, chars: this.tailChars };
  }
}
