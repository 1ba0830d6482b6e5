import type { RouteResponse } from '@parley/shared';
import type { Config } from '../config/config.ts';
import type { TokenService } from '../identity/token.service.ts';
import type { ChannelCache } from '../messaging/channel-cache.ts';
import type { ChannelService } from '../messaging/channel.service.ts';
import type { Presence } from '../messaging/presence.ts';
import type { GatewayMetrics } from '../gateway/metrics.ts';
import type { Webhooks } from '../webhook/webhooks.ts';
import type { AppendQueue } from '../messaging/append-queue.ts';
import type { Fanout } from '../messaging/fanout.ts';
import type { SendService } from '../messaging/send.service.ts';
import { Collector, type ConnectionCounts, type ReadinessReading } from './collector.ts';
import type { Registry } from 'prom-client';
import type { WriterTimings } from '@parley/store';
import { DiagnosticsStore } from './diagnostics.ts';
import { createMetrics } from './metrics.ts';
import type { SnapshotContext } from './snapshot.ts';
import type { ClusterNodeFigures } from '../cluster/cluster.ts';
import type { DebugCluster } from '@parley/shared';

/**
 * Append-queue capacity for pressure scoring, in group-commit batches:
 * a backlog of 8 × `store.batch_max_rows` (4096 rows by default) means
 * senders wait eight commits, which is where latency turns visible.
 */
export const APPEND_CAPACITY_BATCHES = 8;

/** What the server hands the operations surface. */
export interface OpsInputs {
  config: Config;
  send: SendService;
  fanout: Fanout;
  gatewayMetrics: GatewayMetrics;
  queue: AppendQueue;
  connections(): ConnectionCounts;
  readiness(): Promise<ReadinessReading>;
  /** Un-acknowledged RECVs across every session. */
  pendingAcks(): number;
  /** Webhook delivery, when `webhook.http_addr` is set. */
  webhooks: Webhooks | undefined;
  tokens: TokenService;
  channels: ChannelService;
  cache: ChannelCache;
  presence: Presence;
  routeAddresses(host: string | undefined): RouteResponse;
  /** The embedded store's writer-thread commits and pauses (`/metrics`); absent on PostgreSQL. */
  writerTimings?: WriterTimings | undefined;
  /** Cluster mode: the snapshot's node figures and `/debug/cluster`. */
  cluster?: { nodeFigures(): ClusterNodeFigures; debug(): Promise<DebugCluster> } | undefined;
}

/** Restore maintenance: while `active`, bench routes answer 503 (no restore feature sets it yet). */
export interface MaintenanceFlag {
  active: boolean;
}

/** The node's operations surface: collector, snapshot context and switches the routes read. */
export interface Ops {
  config: Config;
  inputs: OpsInputs;
  /** Present when `top.api_enable`. */
  collector: Collector | undefined;
  snapshot: SnapshotContext | undefined;
  /** Present when `observability.debug_api_enable`. */
  diagnostics: DiagnosticsStore | undefined;
  /** Present when `observability.metrics_enable`. */
  metrics: Registry | undefined;
  maintenance: MaintenanceFlag;
  start(): void;
  stop(): void;
}

export function createOps(inputs: OpsInputs): Ops {
  const { config } = inputs;
  const collector = config.top.apiEnable
    ? new Collector(
        {
          send: inputs.send.stats,
          fanout: inputs.fanout.stats,
          gateway: inputs.gatewayMetrics,
          queue: inputs.queue,
          connections: inputs.connections,
          readiness: inputs.readiness,
          pendingAcks: inputs.pendingAcks,
          webhooks: inputs.webhooks && (() => inputs.webhooks!.pressure()),
          appendCapacity: APPEND_CAPACITY_BATCHES * config.store.batchMaxRows,
        },
        {
          intervalMs: config.top.collectIntervalMs,
          historyMs: config.top.historyWindowMs,
          nodeId: config.node.id,
          nodeName: config.node.name,
        },
      )
    : undefined;
  const diagnostics = config.observability.debugApiEnable ? new DiagnosticsStore(config.node.id) : undefined;
  const { queue } = inputs;
  return {
    config,
    inputs,
    collector,
    snapshot: collector && {
      collector,
      nodeId: config.node.id,
      nodeName: config.node.name,
      metricsEnabled: config.observability.metricsEnable,
      threads: config.observability.uvThreadpoolSize,
      ...(inputs.cluster ? { cluster: () => inputs.cluster!.nodeFigures() } : {}),
    },
    diagnostics,
    metrics: config.observability.metricsEnable ? createMetrics(inputs) : undefined,
    maintenance: { active: false },
    start() {
      if (collector || diagnostics) {
        queue.onCommit = (commitMs, records) => {
          collector?.recordCommit(commitMs, records);
          diagnostics?.recordCommit(commitMs, records, queue.depth);
        };
      }
      collector?.start();
    },
    stop() {
      collector?.stop();
      queue.onCommit = undefined;
    },
  };
}
