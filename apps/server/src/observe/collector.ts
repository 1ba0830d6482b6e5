import { performance } from 'node:perf_hooks';
import type { AppendQueue, CommitRecord } from '../messaging/append-queue.ts';
import type { FanoutStats } from '../messaging/fanout.ts';
import type { SendStats } from '../messaging/send.service.ts';
import type { GatewayMetrics } from '../gateway/metrics.ts';
import { AlertBook } from './alerts.ts';
import { countHistogram, latencyHistogram } from './histogram.ts';
import { pressureItems, type QueueGauge } from './pressure.ts';
import { Ring } from './ring.ts';
import type { Readiness } from './readiness.ts';
import { RuntimeSampler, type RuntimeReading } from './runtime-sampler.ts';
import { sessionErrorCondition } from './session-errors.ts';
import { alertConditions } from './verdict.ts';
import { selectWindow, trafficOf } from './window.ts';

/** Live gateway connections by protocol (`pending` = protocol not yet known). */
export interface ConnectionCounts {
  total: number;
  jsonrpc: number;
  wkproto: number;
  pending: number;
}

/** Readiness parts as `/readyz` computes them. */
export type ReadinessReading = Pick<Readiness, 'ready' | 'parts'>;

/** The webhook's bounded resources on one tick (absent when webhooks are off). */
export interface WebhookPressure {
  /** Requests waiting for a worker: the peak since the previous tick. */
  queued: number;
  /** `webhook.queue_size`. */
  queueSize: number;
  /** Requests being retried. */
  retrying: number;
  /** `webhook.workers`. */
  workers: number;
}

/**
 * Most samples taken between two ticks because outbound pressure rose: one
 * per level (busy, degraded, critical), so a climb is always recorded.
 */
export const MAX_RISE_SAMPLES_PER_TICK = 3;

/** What the collector reads; plain objects and functions the server already has. */
export interface CollectorSources {
  send: SendStats;
  fanout: FanoutStats;
  gateway: GatewayMetrics;
  queue: AppendQueue;
  connections(): ConnectionCounts;
  readiness(): Promise<ReadinessReading>;
  /** Un-acknowledged RECVs remembered across every session. */
  pendingAcks(): number;
  /** The webhook queue and retries; undefined when webhooks are off. */
  webhooks: (() => WebhookPressure) | undefined;
  /** Capacity the append queue's depth is scored against, rows. */
  appendCapacity: number;
}

/** One tick: cumulative counters, histogram copies and gauges. */
export interface Sample {
  /** Wall clock, ms since the epoch. */
  at: number;
  /** `performance.now()`, for spans. */
  mono: number;
  sends: number;
  acks: number;
  ackErrors: number;
  fanoutErrors: number;
  appends: number;
  batches: number;
  fanouts: number;
  deliveries: number;
  authFailures: number;
  closes: number;
  /** Sessions closed for an error, cumulative, by `<protocol>.<close_reason>.<class>`. */
  sessionErrors: ReadonlyMap<string, number>;
  /** Un-acknowledged RECVs across sessions (`delivery.ack_bindings`). */
  pendingAcks: number;
  /** Webhook requests being retried (`delivery.retry_queue_depth`). */
  retrying: number;
  appendWait: Float64Array;
  commit: Float64Array;
  batchRows: Float64Array;
  runtime: RuntimeReading;
  connections: ConnectionCounts;
  queues: QueueGauge[];
  activeChannels: number;
  ready: ReadinessReading;
}

export interface CollectorOptions {
  intervalMs: number;
  historyMs: number;
  nodeId: number;
  nodeName: string;
  /** Window the tick's alert evaluation uses for rates, ms. */
  alertWindowMs?: number;
}

/**
 * The node-local collector behind `/top/v1/snapshot`: samples every
 * `top.collect_interval` into a ring holding `top.history_window`, and
 * evaluates alerts on each tick. Hot paths only bump counters and a
 * histogram bucket; everything else happens here, once per tick.
 */
export class Collector {
  readonly samples: Ring<Sample>;
  readonly alerts: AlertBook;
  readonly appendWait = latencyHistogram();
  readonly commit = latencyHistogram();
  readonly batchRows = countHistogram();
  private readonly runtime = new RuntimeSampler();
  private readonly extraQueues = new Map<string, () => QueueGauge>();
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;
  private riseSamples = 0;

  constructor(
    private readonly sources: CollectorSources,
    readonly options: CollectorOptions,
  ) {
    this.samples = new Ring(Math.max(2, Math.ceil(options.historyMs / options.intervalMs) + 1));
    this.alerts = new AlertBook(options.nodeId, options.nodeName);
  }

  /** Records one committed batch (wired to `AppendQueue.onCommit`). */
  recordCommit(commitMs: number, records: readonly CommitRecord[]): void {
    this.commit.record(commitMs);
    this.batchRows.record(records.length);
    for (const r of records) this.appendWait.record(r.waitMs);
  }

  /** Takes the first sample and starts ticking; rising outbound pressure also takes one at once. */
  start(): void {
    this.runtime.start();
    void this.tick();
    this.timer = setInterval(() => void this.tick(), this.options.intervalMs);
    this.timer.unref();
    this.sources.gateway.outbound.onRise = () => this.sampleOnRise();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.sources.gateway.outbound.onRise = undefined;
    this.runtime.stop();
  }

  /**
   * Takes a sample right now, synchronously, when a session's outbound buffer
   * climbs into a higher pressure level: a client that stops reading can
   * fill its buffer in less than a tick, and its pressure must be on record
   * (and alerted) before the write that overflows it closes it. Readiness is
   * the newest sample's (it is probed on ticks); at most
   * `MAX_RISE_SAMPLES_PER_TICK` between two ticks.
   */
  private sampleOnRise(): void {
    const newest = this.samples.at(this.samples.size - 1);
    if (!this.timer || !newest || this.riseSamples >= MAX_RISE_SAMPLES_PER_TICK) return;
    this.riseSamples++;
    const sample: Sample = { ...this.readNow(), ready: newest.ready };
    this.samples.push(sample);
    this.evaluateAlerts(sample);
  }

  /**
   * Adds a bounded queue the collector scores for pressure. Returns the
   * function that removes it. Used for queues outside the server core, and
   * by tests to exercise pressure, verdict and alerts with a known depth.
   */
  registerQueue(key: string, read: () => QueueGauge): () => void {
    this.extraQueues.set(key, read);
    return () => this.extraQueues.delete(key);
  }

  /** Takes one sample now (ticks also run on the interval): readiness first, then everything else at once. */
  async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      const ready = await this.readiness();
      const sample: Sample = { ...this.readNow(), ready };
      this.riseSamples = 0;
      this.samples.push(sample);
      this.evaluateAlerts(sample);
    } finally {
      this.ticking = false;
    }
  }

  /**
   * Every bounded queue, as pressure scores it. Depths are peaks since the
   * previous sample, so bursts between two ticks are not lost.
   */
  private gauges(runtime: RuntimeReading, w: WebhookPressure | undefined): QueueGauge[] {
    const s = this.sources;
    const outbound = s.gateway.outbound;
    const queues: QueueGauge[] = [
      { component: 'storage', pool: 'append', queue: 'append_queue', depth: s.queue.takePeakDepth(), capacity: s.appendCapacity },
      { component: 'gateway', pool: 'outbound', queue: 'session_outbound_bytes', depth: outbound.take(), capacity: outbound.capacity },
      {
        component: 'runtime',
        pool: 'event_loop',
        queue: 'event_loop',
        inflight: runtime.loopUtilization,
        workers: 1,
        waitP99Ms: runtime.loopDelayP99Ms,
      },
    ];
    if (w) {
      queues.push({ component: 'webhook', pool: 'dispatch', queue: 'webhook_queue', depth: w.queued, capacity: w.queueSize });
      queues.push({ component: 'webhook', pool: 'retry', queue: 'webhook_retry', depth: w.retrying, capacity: w.workers });
    }
    for (const read of this.extraQueues.values()) queues.push(read());
    return queues;
  }

  private async readiness(): Promise<ReadinessReading> {
    try {
      const r = await this.sources.readiness();
      return { ready: r.ready, parts: { ...r.parts } };
    } catch {
      return { ready: false, parts: { routes: false, slots: false, channels: false } };
    }
  }

  /** Everything but readiness, read synchronously (so samples stay in time order). */
  private readNow(): Omit<Sample, 'ready'> {
    const s = this.sources;
    const runtime = this.runtime.read();
    const webhook = s.webhooks?.();
    return {
      at: Date.now(),
      mono: performance.now(),
      sends: s.send.sends,
      acks: s.send.acks,
      ackErrors: s.send.ackErrors,
      fanoutErrors: s.send.fanoutErrors,
      appends: s.queue.stats.rows,
      batches: s.queue.stats.batches,
      fanouts: s.fanout.messages,
      deliveries: s.fanout.deliveries,
      authFailures: s.gateway.authFailures,
      closes: s.gateway.closes,
      sessionErrors: new Map(s.gateway.sessionErrors),
      pendingAcks: s.pendingAcks(),
      retrying: webhook?.retrying ?? 0,
      appendWait: this.appendWait.counts.slice(),
      commit: this.commit.counts.slice(),
      batchRows: this.batchRows.counts.slice(),
      runtime,
      connections: { ...s.connections() },
      queues: this.gauges(runtime, webhook),
      activeChannels: s.queue.activeChannels,
    };
  }

  private evaluateAlerts(last: Sample): void {
    const w = selectWindow(this.samples, this.options.alertWindowMs ?? 10_000);
    const errorRate = w ? trafficOf(this, w.first, w.last, w.spanSec).sendack_error_rate : 0;
    const conditions = alertConditions(last.ready.parts, pressureItems(last.queues), errorRate);
    const sessions = w && sessionErrorCondition(w.first.sessionErrors, w.last.sessionErrors, w.spanSec);
    if (sessions) conditions.push(sessions);
    this.alerts.observe(conditions, new Date(last.at));
  }
}
