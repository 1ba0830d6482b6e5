import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { ChannelType, ReasonCode, type RouteResponse } from '@parley/shared';
import type { AppendQueue } from './messaging/append-queue.ts';
import { createApi } from './api/index.ts';
import { buildApp } from './app.ts';
import { createServices } from './services.ts';
import { attachCluster } from './cluster/attach.ts';
import type { ClusterRuntime } from './cluster/cluster.ts';
import type { Config, HostPort } from './config/config.ts';
import { ConnectionRegistry } from './gateway/registry.ts';
import { startTcpGateway, type TcpGateway } from './gateway/tcp-gateway.ts';
import { startWsGateway, type WsGateway } from './gateway/ws-gateway.ts';
import { GatewayMetrics } from './gateway/metrics.ts';
import type { Presence } from './messaging/presence.ts';
import {
  assertStorePresent,
  lockDataDir,
  lockNode,
  openEmbeddedStore,
  openPostgresStore,
  storeMarker,
  type DataDirLock,
  type Store,
} from '@parley/store';
import { assertConfiguredStore, prepareDataDir } from './data-dir/data-dir.ts';
import { checkReadiness, ProbeFailure, type Readiness } from './observe/readiness.ts';
import { createOps, type Ops } from './observe/ops.ts';
import type { Webhooks } from './webhook/webhooks.ts';

/** A started node: its listeners' bound addresses and a clean shutdown. */
export interface RunningServer {
  config: Config;
  app: FastifyInstance;
  store: Store;
  presence: Presence;
  queue: AppendQueue;
  /** The operations surface: top collector, maintenance flag. */
  ops: Ops;
  /** Webhook delivery; undefined when `webhook.http_addr` is empty. */
  webhooks: Webhooks | undefined;
  /** The cluster runtime; undefined unless `cluster.enabled`. */
  cluster: ClusterRuntime | undefined;
  addresses: { api: AddressInfo; ws: AddressInfo; tcp: AddressInfo };
  /** Live gateway connections by protocol. */
  connections(): { total: number; jsonrpc: number; wkproto: number; pending: number };
  close(): Promise<void>;
}

const WILDCARD = new Set(['0.0.0.0', '::', '']);

/** Longest shutdown waits for clients to close their sockets after being told, ms. */
const SHUTDOWN_GRACE_MS = 2000;

/** Longest a readiness check waits for the store's write lock, ms (held by another connection = not ready). */
export const READINESS_LOCK_WAIT_MS = 200;

function hostFor(listener: HostPort | AddressInfo, requestHost: string | undefined): string {
  const host = 'address' in listener ? listener.address : listener.host;
  if (!WILDCARD.has(host)) return host.includes(':') ? `[${host}]` : host;
  const fromRequest = requestHost?.replace(/:\d+$/, '');
  return fromRequest && fromRequest !== '' ? fromRequest : '127.0.0.1';
}

/** What a running node holds exclusively: its data directory and, on PostgreSQL, its node id on the schema. */
interface NodeLocks {
  release(): Promise<void>;
}

/** Opens the store, wires the services and starts the HTTP API and the gateway. */
export async function startServer(config: Config, log: Logger): Promise<RunningServer> {
  const dirLock = lockDataDir(config.node.dataDir);
  let opened: { store: Store; locks: NodeLocks };
  try {
    opened = await openDataDir(config, log, dirLock);
  } catch (err) {
    dirLock.release();
    throw err;
  }
  return startOnStore(config, log, opened.store, opened.locks);
}

/**
 * Checks the (locked) data directory and opens its store: a directory whose
 * marker says it holds a store must still have a database with Parley's schema
 * (SQLite: `<data_dir>/parley.db`; PostgreSQL: the schema `store.postgres_url`
 * names). On PostgreSQL the node also takes its node lock on the schema, so two
 * processes never run one node id (message ids embed it) against one store.
 */
async function openDataDir(config: Config, log: Logger, dirLock: DataDirLock): Promise<{ store: Store; locks: NodeLocks }> {
  const dir = config.node.dataDir;
  assertConfiguredStore(config);
  const mustExist = storeMarker(dir) !== undefined;
  if (config.store.driver === 'postgres') {
    prepareDataDir(config);
    const url = config.store.postgresUrl;
    const nodeLock = await lockNode(url, config.node.id, (err) =>
      log.error({ error: err.message }, 'lost the node lock connection to PostgreSQL: another process could now start with this node.id'),
    );
    const locks: NodeLocks = {
      async release() {
        await nodeLock.release();
        dirLock.release();
      },
    };
    try {
      const store = await openPostgresStore({ url, sync: config.store.sync, poolSize: config.store.postgresPoolSize, mustExist, log });
      log.info({ store: store.label }, 'store: PostgreSQL');
      return { store, locks };
    } catch (err) {
      await nodeLock.release();
      throw err;
    }
  }
  assertStorePresent(dir);
  prepareDataDir(config);
  const store = await openEmbeddedStore({ dataDir: dir, sync: config.store.sync, mustExist, log, walBuffer: config.store.sqliteWalBuffer });
  log.info(
    { walBuffer: store.walBuffer?.on ?? false, reason: store.walBuffer?.reason, sqliteBuild: store.sqlitePatched ? 'patched' : 'stock' },
    'store: SQLite',
  );
  return { store, locks: { release: async () => dirLock.release() } };
}

async function startOnStore(config: Config, log: Logger, store: Store, locks: NodeLocks): Promise<RunningServer> {
  const services = await createServices(config, store, log);
  const { cache, queue, webhooks, presence, fanout, send, tokens, channels } = services;
  let cluster: ClusterRuntime | undefined;
  try {
    cluster = await attachCluster(config, services, store, log);
  } catch (err) {
    await webhooks?.close();
    await store.close();
    await locks.release();
    throw err;
  }
  const metrics = new GatewayMetrics(config.gateway.maxOutboundBytes);

  let ws: WsGateway | undefined;
  let tcp: TcpGateway | undefined;
  const readiness = (): Promise<Readiness> =>
    checkReadiness({
      gatewaysListening: () => ws?.listening === true && tcp?.listening === true,
      storeReadable: () => store.ping(),
      storeWritable: () =>
        store.probeWrite(READINESS_LOCK_WAIT_MS).catch((err: unknown) => {
          throw new ProbeFailure(store.health.describe() ?? (err as Error).message);
        }),
      ...(cluster ? { cluster: { busConnected: () => cluster.bus.connected, slotMapCurrent: () => cluster.slots.mapCurrent } } : {}),
    });
  const routeAddresses = (requestHost: string | undefined): RouteResponse => ({
    tcp_addr: config.api.externalTcpAddr || (tcp ? `${hostFor(tcp.address, requestHost)}:${tcp.address.port}` : ''),
    // With gateway TLS the listener speaks wss:// only, so that is the address clients are given.
    ws_addr: config.api.externalWsAddr || (ws && !config.gateway.tls ? `ws://${hostFor(ws.address, requestHost)}:${ws.address.port}` : ''),
    wss_addr:
      config.api.externalWssAddr || (ws && config.gateway.tls ? `wss://${hostFor(ws.address, requestHost)}:${ws.address.port}` : ''),
  });

  const ops = createOps({
    config,
    send,
    fanout,
    gatewayMetrics: metrics,
    queue,
    tokens,
    channels,
    cache,
    presence,
    connections: () => registry.counts(),
    readiness,
    pendingAcks: () => registry.pendingAcks(),
    writerTimings: store.writerTimings,
    webhooks,
    routeAddresses,
    cluster,
  });

  const app = await buildApp({
    deps: { api: createApi({ ...services, nodeId: config.node.id, routeAddresses }), readiness },
    logger: log,
    maxBodyBytes: config.api.maxBodyBytes,
    requestTimeoutMs: config.api.requestTimeoutMs,
    ops,
    access: {
      keys: config.api.keys,
      credentialRatePerKey: config.api.credentialRatePerKey,
      credentialRatePerUid: config.api.credentialRatePerUid,
    },
    corsOrigins: config.api.corsOrigins,
    https: config.api.tls,
  });
  const registry = new ConnectionRegistry(
    config.gateway.authTimeoutMs,
    config.gateway.idleTimeoutMs,
    metrics,
    config.gateway.maxPendingConnections,
  );
  metrics.outbound.current = () => registry.maxOutboundBytes();
  metrics.preLoginConnections = () => registry.preLoginCount;
  const gatewayServices = {
    nodeId: config.node.id,
    tokens,
    send,
    presence,
    metrics,
    ackPolicy: {
      retryIntervalMs: config.delivery.retryIntervalMs,
      retryMaxCount: config.delivery.retryMaxCount,
      maxPending: config.delivery.pendingAckMaxPerSession,
    },
    // The cached state when the user's channel is loaded already, else one indexed read: a CONNECT
    // neither loads nor keeps the channel's lists (the send path loads them when it needs them).
    isUserBanned: async (uid: string) => {
      const state = cache.peek(uid, ChannelType.Person);
      return (state ? state.info : await store.channels.get(uid, ChannelType.Person))?.ban === 1;
    },
  };
  try {
    await app.listen({ host: config.api.listen.host, port: config.api.listen.port });
    ws = await startWsGateway(
      {
        host: config.gateway.ws.host,
        port: config.gateway.ws.port,
        maxFrameBytes: config.gateway.maxFrameBytes,
        maxOutboundBytes: config.gateway.maxOutboundBytes,
        authTimeoutMs: config.gateway.authTimeoutMs,
        tls: config.gateway.tls,
      },
      gatewayServices,
      registry,
      log,
    );
    tcp = await startTcpGateway(
      { host: config.gateway.tcp.host, port: config.gateway.tcp.port, maxOutboundBytes: config.gateway.maxOutboundBytes },
      gatewayServices,
      registry,
      log,
    );
  } catch (err) {
    await registry.closeAll();
    await ws?.close();
    await app.close();
    await cluster?.stop();
    await store.close();
    await locks.release();
    throw err;
  }
  const wsGateway = ws;
  const tcpGateway = tcp;
  if (cluster) {
    const api = app.server.address() as AddressInfo;
    // What the other nodes (and the console's cluster card) show: a wildcard listener is named by this host's name.
    const host = WILDCARD.has(api.address) ? hostname() : hostFor(api, undefined);
    cluster.apiAddr = `${host}:${api.port}`;
    cluster.members.beat();
    cluster.startRegistry();
  }
  ops.start();

  return {
    config,
    app,
    store,
    presence,
    queue,
    ops,
    webhooks,
    cluster,
    addresses: { api: app.server.address() as AddressInfo, ws: wsGateway.address, tcp: tcpGateway.address },
    connections: () => registry.counts(),
    /**
     * Stops in order: no new connections; every session is told (DISCONNECT /
     * `disconnect`, reason 15 "server shutting down"); appends already queued
     * commit and their senders get their answers; sockets close politely
     * (WebSocket 1001) within 2 s; then the API, webhooks and the store.
     */
    async close() {
      ops.stop();
      wsGateway.stopAccepting();
      tcpGateway.stopAccepting();
      registry.goAway(ReasonCode.SystemError, 'server shutting down');
      await queue.drain();
      await new Promise((r) => setImmediate(r));
      await registry.closeAll(SHUTDOWN_GRACE_MS);
      await wsGateway.close();
      await tcpGateway.close();
      await app.close();
      await queue.drain();
      // Slots are handed over at once (the others need not wait for the leases to run out).
      await cluster?.stop();
      await queue.drain();
      await webhooks?.close();
      await store.close();
      await locks.release();
    },
  };
}
