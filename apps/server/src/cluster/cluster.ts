import type { Logger } from 'pino';
import type { DebugCluster } from '@parley/shared';
import type { Config } from '../config/config.ts';
import type { SystemUidService } from '../identity/system-uid.service.ts';
import type { TokenService } from '../identity/token.service.ts';
import type { AppendQueue } from '../messaging/append-queue.ts';
import type { ChannelCache } from '../messaging/channel-cache.ts';
import type { Fanout } from '../messaging/fanout.ts';
import type { Presence } from '../messaging/presence.ts';
import type { SendService } from '../messaging/send.service.ts';
import { Bus } from './bus.ts';
import { startCacheSync } from './cache-sync.ts';
import { Members } from './members.ts';
import { RemotePresence } from './remote-presence.ts';
import { ClusterSendRouter, type FencedCheck } from './send-router.ts';
import { SlotManager, type LeaseStore } from './slot-manager.ts';
import { SlotTable } from './slots.ts';
import { decodeDelivery, encodeDelivery } from './wire.ts';

/** Recipients per remote delivery message (a large group is split). */
const DELIVERY_CHUNK = 5000;

/** The node's services the cluster runtime hooks into. */
export interface ClusterServices {
  cache: ChannelCache;
  tokens: TokenService;
  systemUids: SystemUidService;
  fanout: Fanout;
  send: SendService;
  presence: Presence;
  queue: AppendQueue;
}

/** The nodes table of the store (`cluster_nodes`): every node that ever ran, with its addresses. */
export interface NodeRegistry {
  heartbeat(nodeId: number, addresses: Record<string, string>, stateRevision: number, started?: boolean): Promise<void>;
  list(): Promise<{ now: number; nodes: Array<{ nodeId: number; addresses: Record<string, string>; lastSeen: number }> }>;
}

/** The node section of the top snapshot in cluster mode. */
export interface ClusterNodeFigures {
  controller_leader: number;
  slot_count: number;
  hash_slot_count: number;
  state_revision: number;
}

/**
 * One node's part of a cluster: the NATS bus, membership (heartbeats),
 * presence of uids on other nodes, slot leases, send routing, remote
 * deliveries and cache invalidation. `start` returns once the node knows the
 * slot map; until `stop`, the node sequences the slots it holds and forwards
 * the rest.
 */
export class ClusterRuntime {
  /** The node's API address as the others should show it (set once the API listens). */
  apiAddr = '';
  private registryTimer: NodeJS.Timeout | undefined;
  private constructor(
    readonly config: Config,
    private readonly registry: NodeRegistry,
    readonly bus: Bus,
    readonly members: Members,
    readonly presence: RemotePresence,
    readonly slots: SlotManager,
    readonly router: ClusterSendRouter,
  ) {}

  static async start(
    config: Config,
    services: ClusterServices,
    leases: LeaseStore,
    registry: NodeRegistry,
    fencedSlot: FencedCheck,
    log: Logger,
  ): Promise<ClusterRuntime> {
    const c = config.cluster;
    const nodeId = config.node.id;
    const clog = log.child({ component: 'cluster' });
    const bus = await Bus.connect(c.natsServers, c.id, config.node.name, clog);
    try {
      const table = new SlotTable(c.initialSlotCount, c.hashSlotCount);
      // Filled in below; the heartbeat and member events read it once the node is running.
      const ref: { runtime?: ClusterRuntime } = {};
      const members = new Members(
        bus,
        () => ({
          id: nodeId,
          name: config.node.name,
          api: ref.runtime?.apiAddr ?? '',
          ready: ref.runtime?.slots.mapCurrent === true && bus.connected,
          slots: ref.runtime?.slots.heldSlots() ?? [],
        }),
        c.nodeTimeoutMs,
        clog,
        {
          joined: () => {
            ref.runtime?.presence.announceAll();
            ref.runtime?.slots.nudge();
          },
          left: (m) => {
            ref.runtime?.router.nodeLeft(m.id);
            ref.runtime?.presence.nodeLeft(m);
            ref.runtime?.slots.nudge();
          },
        },
      );
      await members.assertIdFree();
      const remote = new RemotePresence(bus, nodeId, members.boot, () => services.presence.uids(), c.presenceTtlMs, clog);
      const slots = new SlotManager(
        leases,
        table,
        nodeId,
        members,
        c.slotLeaseTtlMs,
        {
          changed: () => {
            members.beat();
            bus.publish(bus.subject('slots'), { node: nodeId });
          },
          forgetSlot: (slot) => services.queue.forgetTails((id) => table.slotOf(id) === slot),
          drain: () => services.queue.drain(),
        },
        clog,
      );
      // Every append carries the epoch of its slot's lease: a stale owner's write fails instead of forking a log.
      services.queue.fenceOf = (channelId) => {
        const slot = table.slotOf(channelId);
        return { slot, epoch: slots.epochOf(slot) };
      };
      const router = new ClusterSendRouter(bus, slots, nodeId, c.forwardTimeoutMs, fencedSlot, (id) => members.isLive(id), clog);
      const runtime = new ClusterRuntime(config, registry, bus, members, remote, slots, router);
      ref.runtime = runtime;

      // Deliveries: recipients with sessions elsewhere get their RECVs through the node holding them.
      services.fanout.remote = {
        nodesOf: (uid) => remote.nodesOf(uid),
        send: (node, uids, delivery, exclude) => {
          for (let i = 0; i < uids.length; i += DELIVERY_CHUNK) {
            bus.publish(bus.subject('deliver', node), encodeDelivery(delivery, uids.slice(i, i + DELIVERY_CHUNK), exclude));
          }
        },
      };
      bus.subscribe(bus.subject('deliver', nodeId), (body) => {
        const d = decodeDelivery(body);
        if (!d) return clog.warn('cluster delivery with an unexpected shape; ignored');
        services.fanout.deliverLocal(d.uids, d.delivery, d.exclude?.node === nodeId ? d.exclude.session : undefined);
      });
      services.presence.onUidChange = (uid, online) => remote.localChanged(uid, online);
      startCacheSync(bus, nodeId, services, clog);
      bus.subscribe(bus.subject('slots'), (body) => {
        if ((body as { node?: unknown } | null)?.node !== nodeId) slots.nudge();
      });
      router.serve((cmd) => services.send.send(cmd));
      services.send.router = router;

      members.start();
      remote.start();
      remote.announceAll();
      // Hear the others' heartbeats before claiming a share of the slots, so a joining node does not grab them all.
      await new Promise((r) => setTimeout(r, Math.ceil(c.nodeTimeoutMs / 2)));
      slots.start();
      await slots.settled();
      await bus.flush();
      return runtime;
    } catch (err) {
      await bus.close();
      throw err;
    }
  }

  /** `controller_leader`: Parley has no controller process (leases decide ownership); this is the lowest live node id. */
  nodeFigures(): ClusterNodeFigures {
    return {
      controller_leader: this.members.liveIds()[0] ?? this.config.node.id,
      slot_count: this.slots.table.slotCount,
      hash_slot_count: this.slots.table.hashSlotCount,
      state_revision: this.slots.stateRevision,
    };
  }

  /**
   * Records this node in the store's node table (its API address, state
   * revision, last seen), so that `/debug/cluster` lists nodes that are gone
   * too; every lease round's interval.
   */
  startRegistry(): void {
    let started = true;
    const beat = () => {
      const first = started;
      started = false;
      this.registry
        .heartbeat(this.config.node.id, { api: this.apiAddr, name: this.config.node.name }, this.slots.stateRevision, first)
        .catch((err: unknown) => this.log.warn({ err }, 'cluster node table heartbeat failed'));
    };
    beat();
    this.registryTimer = setInterval(beat, this.slots.intervalMs);
    this.registryTimer.unref();
  }

  private get log(): Logger {
    return this.bus.log;
  }

  /** `GET /debug/cluster`: the slot map (owner, epoch, expiry, hash slots) and every node, live or gone. */
  async debug(): Promise<DebugCluster> {
    const map = this.slots.map;
    const bySlot = new Map(map.leases.map((l) => [l.slot, l]));
    const nodeId = this.config.node.id;
    const slots = [];
    for (let slot = 0; slot < this.slots.table.slotCount; slot++) {
      const lease = bySlot.get(slot);
      const owner = this.slots.ownerOf(slot);
      slots.push({
        slot_id: slot,
        leader_id: owner ?? 0,
        replicas: owner === undefined ? [] : [owner],
        epoch: lease?.epoch ?? 0,
        expires_in_ms: lease && owner !== undefined ? Math.max(0, lease.expiresAt - map.dbNow) : 0,
        hash_slots: this.slots.table.hashSlotsOf(slot),
      });
    }
    const self = { node_id: nodeId, name: this.config.node.name, api_addr: this.apiAddr, live: true, slots: this.slots.heldSlots() };
    const peers = this.members.peers().map((m) => ({ node_id: m.id, name: m.name, api_addr: m.api, live: true, slots: m.slots }));
    const known = new Set([nodeId, ...peers.map((p) => p.node_id)]);
    const gone = (await this.registry.list().catch(() => ({ nodes: [] as Awaited<ReturnType<NodeRegistry['list']>>['nodes'] }))).nodes
      .filter((n) => !known.has(n.nodeId))
      .map((n) => ({
        node_id: n.nodeId,
        name: n.addresses.name ?? `node-${n.nodeId}`,
        api_addr: n.addresses.api ?? '',
        live: false,
        slots: [] as number[],
      }));
    return {
      node_id: nodeId,
      state_revision: this.slots.stateRevision,
      cluster_id: this.config.cluster.id,
      controller_leader: this.nodeFigures().controller_leader,
      slot_count: this.slots.table.slotCount,
      hash_slot_count: this.slots.table.hashSlotCount,
      slot_map_current: this.slots.mapCurrent,
      bus_connected: this.bus.connected,
      nodes: [self, ...peers, ...gone].sort((a, b) => a.node_id - b.node_id),
      remote_presence: this.presence.counts(),
      router: { ...this.router.stats },
      slots,
    };
  }

  /**
   * Leaves the cluster: gives up every slot at once (so others take them over
   * without waiting for the leases to run out), then closes the bus. Called
   * after the append queue has drained.
   */
  async stop(): Promise<void> {
    if (this.registryTimer) clearInterval(this.registryTimer);
    this.members.stop();
    this.presence.stop();
    await this.slots.stop();
    this.bus.publish(this.bus.subject('slots'), { node: this.config.node.id });
    await this.bus.close();
  }
}
