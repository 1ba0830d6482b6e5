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

/** What the collector reads; plain objects and functions the server already has. */
export interface CollectorSources {
  send: SendStats;
  fanout: FanoutStats;
  gateway: GatewayMetrics;
  queue: AppendQueue;
  connections(): ConnectionCounts;
  readiness(): Promise<ReadinessReading>;
  /** Capacity the append queue's depth is scored against, rows. */
  appendCapacity: number;
  /** `gateway.max_outbound_bytes`: capacity of one session's outbound buffer. */
  outboundCapacity: number;
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

  /** Takes the first sample and starts ticking. */
  start(): void {
    this.runtime.start();
    void this.tick();
    this.timer = setInterval(() => void this.tick(), this.options.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.runtime.stop();
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

  /** Takes one sample now (ticks also run on the interval). */
  async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      const sample = await this.read();
      this.samples.push(sample);
      this.evaluateAlerts(sample);
    } finally {
      this.ticking = false;
    }
  }

  private gauges(runtime: RuntimeReading): QueueGauge[] {
    const s = this.sources;
    const queues: QueueGauge[] = [
      { component: 'storage', pool: 'append', queue: 'append_queue', depth: s.queue.depth, capacity: s.appendCapacity },
      { component: 'gateway', pool: 'outbound', queue: 'session_outbound_bytes', depth: s.gateway.outboundBytesMax ?? 0, capacity: s.outboundCapacity },
      { component: 'runtime', pool: 'event_loop', queue: 'event_loop', inflight: runtime.loopUtilization, workers: 1, waitP99Ms: runtime.loopDelayP99Ms },
    ];
    for (const read of this.extraQueues.values()) queues.push(read());
    return queues;
  }

  private async read(): Promise<Sample> {
    const s = this.sources;
    let ready: ReadinessReading;
    try {
      const r = await s.readiness();
      ready = { ready: r.ready, parts: { ...r.parts } };
    } catch {
      ready = { ready: false, parts: { routes: false, slots: false, channels: false } };
    }
    const runtime = this.runtime.read();
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
      appendWait: this.appendWait.counts.slice(),
      commit: this.commit.counts.slice(),
      batchRows: this.batchRows.counts.slice(),
      runtime,
      connections: { ...s.connections() },
      queues: this.gauges(runtime),
      activeChannels: s.queue.activeChannels,
      ready,
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
