import { TOP_VIEW_SECTIONS, type TopQuery, type TopSnapshot, type TopView } from '@parley/shared';
import { DomainError } from '../errors.ts';
import type { Collector, Sample } from './collector.ts';
import { pressureItems, pressureSection } from './pressure.ts';
import { parseTopQuery } from './top-query.ts';
import { verdictOf } from './verdict.ts';
import { perSec, round, selectWindow, trafficOf, type SampleWindow } from './window.ts';

/** A checked snapshot query. */
export interface SnapshotQuery {
  windowMs: number;
  view: TopView;
  /** 1..100. */
  limit: number;
}

/** What the snapshot needs besides the collector. */
export interface SnapshotContext {
  collector: Collector;
  nodeId: number;
  nodeName: string;
  metricsEnabled: boolean;
  /** libuv threadpool size, reported as `threads`. */
  threads: number;
  /** Cluster mode: controller leader, slot counts and state revision for the node section. */
  cluster?: () => { controller_leader: number; slot_count: number; hash_slot_count: number; state_revision: number };
}

/** Node-specific meanings of Go-shaped fields, repeated in every snapshot. */
export const SNAPSHOT_NOTES = [
  'resources.goroutines = active libuv handles and requests (process.getActiveResourcesInfo)',
  'resources.threads = libuv threadpool size (UV_THREADPOOL_SIZE, default 4)',
  'cluster_snapshot unavailable: single-node deployment, no cluster runtime',
  'pressure runtime/event_loop: inflight = event-loop utilization of the single JS thread, wait_p99_ms = event-loop delay p99',
];

/** The notes of a node in cluster mode: the snapshot stays node-local. */
export const CLUSTER_SNAPSHOT_NOTES = [
  ...SNAPSHOT_NOTES.filter((n) => !n.startsWith('cluster_snapshot')),
  'cluster_snapshot unavailable: the snapshot is node-local (no cluster fan-out); the slot map is at /debug/cluster',
  'node.controller_leader = the lowest live node id (slot ownership is decided by leases in PostgreSQL, not by a controller)',
];

function sectionsOf(w: SampleWindow<Sample>, ctx: SnapshotContext, limit: number) {
  const { first, last, spanSec } = w;
  const c = ctx.collector;
  const traffic = trafficOf(c, first, last, spanSec);
  const items = pressureItems(last.queues);
  const appendGauge = last.queues.find((q) => q.queue === 'append_queue')!;
  const outbound = last.queues.find((q) => q.queue === 'session_outbound_bytes');
  const commitP99 = round(c.commit.quantile(last.commit, first.commit, 0.99));
  const fanouts = last.fanouts - first.fanouts;
  const { total, pending: _pending, ...byProtocol } = last.connections;
  return {
    traffic,
    items,
    clients: {
      connections: total,
      connections_by_protocol: byProtocol,
      auth_fail_per_sec: perSec(last.authFailures, first.authFailures, spanSec),
      close_per_sec: perSec(last.closes, first.closes, spanSec),
    },
    pressure: pressureSection(items, limit),
    channelv2: {
      active_total: last.activeChannels,
      active_leader: last.activeChannels,
      active_follower: 0,
      follower_parked: 0,
      reactor_mailbox_depth_max: appendGauge.depth ?? 0,
      reactor_mailbox_capacity_max: appendGauge.capacity ?? 0,
      worker_queue_depth_by_pool: { append: appendGauge.depth ?? 0 },
      worker_queue_capacity_by_pool: { append: appendGauge.capacity ?? 0 },
      worker_inflight_by_pool: { append: 0 },
      worker_capacity_by_pool: { append: 1 },
      append_p99_ms: traffic.append_p99_ms,
      hot_stage: commitP99 > traffic.append_p99_ms ? 'commit' : 'append',
      stage_p99_ms: { append: traffic.append_p99_ms, commit: commitP99 },
    },
    storage: {
      commit_queues: [
        {
          store: 'sqlite',
          depth: appendGauge.depth ?? 0,
          capacity: appendGauge.capacity ?? 0,
          request_p99_ms_by_lane: { append: traffic.append_p99_ms },
          batch_records_p50: round(c.batchRows.quantile(last.batchRows, first.batchRows, 0.5)),
          batch_commit_p99_ms: commitP99,
        },
      ],
    },
    delivery: {
      push_per_sec: traffic.deliver_per_sec,
      routes_per_sec: perSec(last.fanouts, first.fanouts, spanSec),
      push_p99_ms: 0,
      retry_queue_depth: last.retrying,
      ack_bindings: last.pendingAcks,
      recipient_queue_depth: outbound?.depth ?? 0,
      recipient_queue_capacity: outbound?.capacity ?? 0,
      error_rate: fanouts > 0 ? round((last.fanoutErrors - first.fanoutErrors) / fanouts, 4) : 0,
    },
  };
}

/**
 * Builds `/top/v1/snapshot` from the collector's ring. Undefined while the
 * window holds fewer than two samples (warming up: the route answers 503).
 * Pressure and readiness come from the newest sample; rates and percentiles
 * from the difference between the window's first and last samples.
 */
export function buildSnapshot(ctx: SnapshotContext, q: SnapshotQuery, now = new Date()): TopSnapshot | undefined {
  const c = ctx.collector;
  const w = selectWindow(c.samples, q.windowMs);
  if (!w) return undefined;
  const { first, last, spanSec } = w;
  const s = sectionsOf(w, ctx, q.limit);
  const snapshot: TopSnapshot = {
    version: 'top/v1',
    scope: 'local_node',
    generated_at: now.toISOString(),
    window_seconds: Math.round(spanSec),
    node: { id: ctx.nodeId, name: ctx.nodeName, ready: last.ready.ready, ready_parts: last.ready.parts, ...ctx.cluster?.() },
    verdict: verdictOf(last.ready.parts, s.items, s.traffic.sendack_error_rate),
    resources: {
      cpu_percent: spanSec > 0 ? round(((last.runtime.cpuMicros - first.runtime.cpuMicros) / 1e6 / spanSec) * 100, 2) : 0,
      memory_rss_bytes: last.runtime.rssBytes,
      memory_vms_bytes: last.runtime.vmsBytes,
      goroutines: last.runtime.activeResources,
      threads: ctx.threads,
    },
    alerts: c.alerts.section(q.limit),
    sources: {
      collector: { available: true, sample_count: w.count, warming_up: false },
      cluster_snapshot: { available: false, sample_count: 0, warming_up: false },
      metrics: { enabled: ctx.metricsEnabled, required: false },
      notes: ctx.cluster ? CLUSTER_SNAPSHOT_NOTES : SNAPSHOT_NOTES,
    },
  };
  const wanted = new Set(TOP_VIEW_SECTIONS[q.view]);
  if (wanted.has('traffic')) snapshot.traffic = s.traffic;
  if (wanted.has('clients')) snapshot.clients = s.clients;
  if (wanted.has('pressure')) snapshot.pressure = s.pressure;
  if (wanted.has('channelv2')) snapshot.channelv2 = s.channelv2;
  if (wanted.has('storage')) snapshot.storage = s.storage;
  if (wanted.has('delivery')) snapshot.delivery = s.delivery;
  return snapshot;
}

/**
 * `GET /top/v1/snapshot`: 404 without a collector (`top.api_enable` false),
 * 400 on a bad query, 503 while the window holds fewer than two samples.
 */
export function topSnapshot(ctx: SnapshotContext | undefined, query: TopQuery): TopSnapshot {
  if (!ctx) throw new DomainError('not_configured', 404, 'top snapshot provider is not configured');
  const snapshot = buildSnapshot(ctx, parseTopQuery(query));
  if (!snapshot) throw new DomainError('warming_up', 503, 'top collector warming up');
  return snapshot;
}
