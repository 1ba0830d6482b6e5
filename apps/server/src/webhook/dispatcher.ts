import { createHmac } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';

/** One webhook POST waiting to be sent. */
export interface WebhookRequest {
  /** The `event` query parameter, e.g. `msg.notify`. */
  event: string;
  /** Items it carries (messages, status entries or offline uids), for the drop count. */
  items: number;
  /** Builds the JSON body; called once, by a worker, off the send path. */
  body(): string | Promise<string>;
}

/** Counters since start. Units are requests unless named otherwise. */
export interface WebhookStats {
  /** Requests the receiver answered 200. */
  delivered: number;
  /** Requests given up after `retry_max_attempts` attempts (or a body that failed to build). */
  failed: number;
  /** Requests never sent: the queue was full, or they were still queued at shutdown. */
  dropped: number;
  /** Items inside dropped requests. */
  droppedItems: number;
  /** Attempts after a request's first. */
  retries: number;
}

export interface DispatcherOptions {
  /** Receiver URL; `?event=<name>` is added per request. */
  url: string;
  /** HMAC-SHA256 key for `X-Parley-Signature`; '' = unsigned. */
  secret: string;
  /** Most requests waiting for a worker. */
  queueSize: number;
  /** Most requests in flight. */
  concurrency: number;
  /** Bound on one attempt, milliseconds. */
  requestTimeoutMs: number;
  /** Total attempts per request (1 = no retry). */
  maxAttempts: number;
  log: Logger;
}

/** First retry delay, milliseconds; it doubles per retry up to `BACKOFF_MAX_MS`. */
export const BACKOFF_BASE_MS = 250;
/** Longest wait between two attempts, milliseconds. */
export const BACKOFF_MAX_MS = 10_000;
/** Least time between two failure warnings in the log, milliseconds. */
const WARN_EVERY_MS = 10_000;

/** Wait before attempt `attempt` (2, 3, ...): 250 ms, 500 ms, 1 s, ... capped at 10 s. */
export function backoffMs(attempt: number): number {
  return Math.min(BACKOFF_BASE_MS * 2 ** (attempt - 2), BACKOFF_MAX_MS);
}

/**
 * A bounded FIFO of webhook requests drained by at most `concurrency`
 * workers. `enqueue` is O(1) and never waits: a full queue drops the request
 * and counts it, so a slow or dead receiver can never slow the send path.
 * Only HTTP 200 is success; anything else (status, network error, timeout)
 * is retried with exponential backoff, the worker holding the request.
 */
export class Dispatcher {
  readonly stats: WebhookStats = { delivered: 0, failed: 0, dropped: 0, droppedItems: 0, retries: 0 };
  private queue: (WebhookRequest | undefined)[] = [];
  private head = 0;
  private active = 0;
  private pumpScheduled = false;
  private closed = false;
  private readonly abort = new AbortController();
  private idle: (() => void) | undefined;
  private lastWarn = 0;
  private suppressed = 0;
  private retryingNow = 0;
  private peakQueued = 0;

  constructor(private readonly options: DispatcherOptions) {
    // Every in-flight attempt and backoff listens for shutdown on this one signal.
    setMaxListeners(2 * options.concurrency + 8, this.abort.signal);
  }

  /** Requests waiting for a worker. */
  get queued(): number {
    return this.queue.length - this.head;
  }

  /** Requests being sent (or backing off between attempts). */
  get inFlight(): number {
    return this.active;
  }

  /** Requests past their first attempt: backing off or trying again (each holds a worker). */
  get retrying(): number {
    return this.retryingNow;
  }

  /** The longest the queue has been since the previous call (at least its length now); starts the next period. */
  takePeakQueued(): number {
    const peak = Math.max(this.peakQueued, this.queued);
    this.peakQueued = this.queued;
    return peak;
  }

  /** Queues a request; false (and counted as dropped) when full or closed. */
  enqueue(request: WebhookRequest): boolean {
    if (this.closed || this.queued >= this.options.queueSize) {
      this.drop(request);
      return false;
    }
    this.queue.push(request);
    if (this.queued > this.peakQueued) this.peakQueued = this.queued;
    if (!this.pumpScheduled && this.active < this.options.concurrency) {
      this.pumpScheduled = true;
      setImmediate(() => this.pump());
    }
    return true;
  }

  /**
   * Stops accepting requests, lets queued and in-flight ones finish for up to
   * `graceMs`, then aborts what is left and counts the unsent as dropped.
   */
  async close(graceMs: number): Promise<void> {
    this.closed = true;
    if (this.active > 0 || this.queued > 0) {
      const drained = new Promise<void>((resolve) => (this.idle = resolve));
      this.pump();
      await Promise.race([drained, sleep(graceMs, undefined, { ref: false })]);
    }
    this.abort.abort();
    for (let r = this.take(); r; r = this.take()) this.drop(r);
    if (this.active > 0) await new Promise<void>((resolve) => (this.idle = resolve));
  }

  private drop(request: WebhookRequest): void {
    this.stats.dropped++;
    this.stats.droppedItems += request.items;
  }

  private take(): WebhookRequest | undefined {
    if (this.head >= this.queue.length) return undefined;
    const request = this.queue[this.head];
    this.queue[this.head++] = undefined;
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    return request;
  }

  private pump(): void {
    this.pumpScheduled = false;
    while (this.active < this.options.concurrency && this.queued > 0 && !this.abort.signal.aborted) {
      this.active++;
      void this.work();
    }
  }

  private async work(): Promise<void> {
    try {
      while (!this.abort.signal.aborted) {
        const request = this.take();
        if (!request) break;
        await this.send(request);
      }
    } finally {
      this.active--;
      if (this.active === 0 && this.queued === 0) this.idle?.();
    }
  }

  private async send(request: WebhookRequest): Promise<void> {
    let body: string;
    try {
      body = await request.body();
    } catch (err) {
      this.stats.failed++;
      this.warn(request.event, `body not built: ${(err as Error).message}`);
      return;
    }
    const url = new URL(this.options.url);
    url.searchParams.set('event', request.event);
    const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'parley-webhook' };
    if (this.options.secret !== '') {
      headers['x-parley-signature'] = `sha256=${createHmac('sha256', this.options.secret).update(body).digest('hex')}`;
    }
    let problem = '';
    let retrying = false;
    try {
      for (let attempt = 1; attempt <= this.options.maxAttempts; attempt++) {
        if (attempt > 1) {
          this.stats.retries++;
          if (!retrying) {
            retrying = true;
            this.retryingNow++;
          }
          try {
            await sleep(backoffMs(attempt), undefined, { signal: this.abort.signal });
          } catch {
            break;
          }
        }
        try {
          const signal = AbortSignal.any([this.abort.signal, AbortSignal.timeout(this.options.requestTimeoutMs)]);
          const res = await fetch(url, { method: 'POST', headers, body, signal });
          await res.arrayBuffer();
          if (res.status === 200) {
            this.stats.delivered++;
            return;
          }
          problem = `HTTP ${res.status}`;
        } catch (err) {
          const e = err as Error & { cause?: Error };
          problem = e.name === 'TimeoutError' ? 'timed out' : (e.cause?.message ?? e.message);
        }
        if (this.abort.signal.aborted) break;
      }
    } finally {
      if (retrying) this.retryingNow--;
    }
    this.stats.failed++;
    this.warn(request.event, problem || 'aborted at shutdown');
  }

  /** Logs a failure at most once per `WARN_EVERY_MS`, with the count of those not logged. */
  private warn(event: string, problem: string): void {
    const now = Date.now();
    if (now - this.lastWarn < WARN_EVERY_MS) {
      this.suppressed++;
      return;
    }
    this.options.log.warn({ event, problem, suppressed: this.suppressed, stats: this.stats }, 'webhook request failed');
    this.lastWarn = now;
    this.suppressed = 0;
  }
}
