import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';
import type { Delivery } from '../messaging/delivery.ts';
import type { MessagingEvents } from '../messaging/events.ts';
import { Batcher } from './batcher.ts';
import { Dispatcher, type WebhookStats } from './dispatcher.ts';
import { notifyBody, offlineBody, onlineStatusEntry } from './webhook-body.ts';

/** How long `close()` lets queued and in-flight requests finish, milliseconds. */
export const CLOSE_GRACE_MS = 1000;

/**
 * Webhook delivery (semantics.md §10): `msg.notify`, `msg.offline` and
 * `user.onlinestatus` POSTed to `webhook.http_addr`, batched, retried with
 * backoff and, with `webhook.secret`, signed (`X-Parley-Signature`).
 * The messaging hooks only append to a batch or a bounded queue; building
 * bodies and HTTP happen later on workers, so sends never wait for the
 * receiver.
 */
export class Webhooks {
  private readonly dispatcher: Dispatcher;
  private readonly notify: Batcher<Delivery>;
  private readonly status: Batcher<string>;

  constructor(
    private readonly config: Config['webhook'],
    private readonly log: Logger,
  ) {
    this.dispatcher = new Dispatcher({
      url: config.httpAddr,
      secret: config.secret,
      queueSize: config.queueSize,
      concurrency: config.workers,
      requestTimeoutMs: config.requestTimeoutMs,
      maxAttempts: config.retryMaxAttempts,
      log,
    });
    this.notify = new Batcher(config.msgNotifyBatchMaxItems, config.msgNotifyBatchMaxWaitMs, (batch) =>
      this.dispatcher.enqueue({ event: 'msg.notify', items: batch.length, body: () => notifyBody(batch) }),
    );
    this.status = new Batcher(config.onlineStatusBatchMaxItems, config.onlineStatusBatchMaxWaitMs, (batch) =>
      this.dispatcher.enqueue({ event: 'user.onlinestatus', items: batch.length, body: () => JSON.stringify(batch) }),
    );
  }

  /** Counters since start (requests; `droppedItems` in messages, status entries or uids). */
  get stats(): Readonly<WebhookStats> & { queued: number; inFlight: number; retrying: number } {
    return {
      ...this.dispatcher.stats,
      queued: this.dispatcher.queued,
      inFlight: this.dispatcher.inFlight,
      retrying: this.dispatcher.retrying,
    };
  }

  /**
   * The webhook's bounded resources as top pressure reads them: the request
   * queue (peak length since the previous read, against `webhook.queue_size`)
   * and the requests being retried (against `webhook.workers`: when every
   * worker is retrying, nothing new is sent).
   */
  pressure(): { queued: number; queueSize: number; retrying: number; workers: number } {
    return {
      queued: this.dispatcher.takePeakQueued(),
      queueSize: this.config.queueSize,
      retrying: this.dispatcher.retrying,
      workers: this.config.workers,
    };
  }

  /** Assigns the handlers of the focused events onto the core's hook object. */
  attach(events: MessagingEvents): void {
    if (this.focused('msg.notify')) events.messageCommitted = (d) => this.guard(() => this.notify.add(d));
    if (this.focused('msg.offline')) events.recipientsOffline = (d, uids) => this.guard(() => this.offline(d, uids));
    if (this.focused('user.onlinestatus')) {
      events.sessionChanged = (s, online, uidSessions, total) =>
        this.guard(() => {
          // Offline is reported only when the uid's last session on this node closes.
          if (online || uidSessions === 0) this.status.add(onlineStatusEntry(s, online, uidSessions, total));
        });
    }
  }

  /** Flushes pending batches, gives them `CLOSE_GRACE_MS` to be sent, then aborts the rest. */
  async close(): Promise<void> {
    this.notify.flush();
    this.status.flush();
    await this.dispatcher.close(CLOSE_GRACE_MS);
  }

  private focused(event: string): boolean {
    return this.config.focusEvents.length === 0 || this.config.focusEvents.includes(event);
  }

  /** One request per `offline_uid_batch_size` uids. */
  private offline(d: Delivery, uids: string[]): void {
    const size = this.config.offlineUidBatchSize;
    for (let i = 0; i < uids.length; i += size) {
      const chunk = uids.length <= size ? uids : uids.slice(i, i + size);
      this.dispatcher.enqueue({ event: 'msg.offline', items: chunk.length, body: () => offlineBody(d, chunk) });
    }
  }

  /** Hooks run on the send path: an observer's bug must never fail a send. */
  private guard(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      // Losing one webhook beats failing the send that triggered it.
      this.log.error({ err }, 'webhook hook failed');
    }
  }
}

/** Webhooks for this config, or undefined when `webhook.http_addr` is empty. */
export function createWebhooks(config: Config['webhook'], log: Logger): Webhooks | undefined {
  return config.httpAddr === '' ? undefined : new Webhooks(config, log);
}
