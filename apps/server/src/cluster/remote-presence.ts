import { performance } from 'node:perf_hooks';
import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { Logger } from 'pino';
import type { Bus } from './bus.ts';
import type { Member } from './members.ts';

/** Uids per full announcement message (keeps each under the bus' size limit). */
const ANNOUNCE_CHUNK = 2000;
/** Local changes are gathered this long into one message, ms. */
const DELTA_DELAY_MS = 5;

const PresenceMessage = Type.Object({
  node: Type.Integer({ minimum: 1, maximum: 1023 }),
  boot: Type.String({ maxLength: 64 }),
  on: Type.Array(Type.String({ maxLength: 1024 }), { maxItems: ANNOUNCE_CHUNK }),
  off: Type.Array(Type.String({ maxLength: 1024 }), { maxItems: ANNOUNCE_CHUNK }),
});

/**
 * Which other nodes hold sessions of which uids. Each node announces a uid
 * when its first session there opens and again when its last closes, and
 * re-announces every online uid every third of `cluster.presence_ttl`; an
 * entry not refreshed within the TTL lapses, and every entry of a node whose
 * heartbeat stops (or that restarts) is dropped at once. Fan-out reads it to
 * send a message's RECVs only to the nodes that hold recipients' sessions.
 */
export class RemotePresence {
  /** uid → node id → expiry (`performance.now()` ms). */
  private readonly byUid = new Map<string, Map<number, number>>();
  private readonly byNode = new Map<number, { boot: string; uids: Set<string> }>();
  private pendingOn = new Set<string>();
  private pendingOff = new Set<string>();
  private deltaTimer: NodeJS.Timeout | undefined;
  private refreshTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly bus: Bus,
    private readonly nodeId: number,
    private readonly boot: string,
    /** The uids with at least one session on this node now. */
    private readonly localUids: () => Iterable<string>,
    private readonly ttlMs: number,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.bus.subscribe(this.bus.subject('presence'), (body) => this.heard(body));
    this.refreshTimer = setInterval(() => this.announceAll(), Math.max(100, Math.floor(this.ttlMs / 3)));
    this.refreshTimer.unref();
  }

  stop(): void {
    if (this.refreshTimer) clearInterval(this.refreshTimer);
    if (this.deltaTimer) clearTimeout(this.deltaTimer);
    this.flushDelta();
  }

  /** A uid's first session on this node opened (`online`) or its last one closed. */
  localChanged(uid: string, online: boolean): void {
    if (online) {
      this.pendingOff.delete(uid);
      this.pendingOn.add(uid);
    } else {
      this.pendingOn.delete(uid);
      this.pendingOff.add(uid);
    }
    if (this.pendingOn.size + this.pendingOff.size >= ANNOUNCE_CHUNK) this.flushDelta();
    else this.deltaTimer ??= setTimeout(() => this.flushDelta(), DELTA_DELAY_MS);
  }

  private flushDelta(): void {
    if (this.deltaTimer) clearTimeout(this.deltaTimer);
    this.deltaTimer = undefined;
    if (this.pendingOn.size === 0 && this.pendingOff.size === 0) return;
    const on = [...this.pendingOn];
    const off = [...this.pendingOff];
    this.pendingOn = new Set();
    this.pendingOff = new Set();
    this.publish(on, off);
  }

  /** Re-announces every uid online here (on a timer, and when a node joins so it learns them at once). */
  announceAll(): void {
    let chunk: string[] = [];
    for (const uid of this.localUids()) {
      chunk.push(uid);
      if (chunk.length === ANNOUNCE_CHUNK) {
        this.publish(chunk, []);
        chunk = [];
      }
    }
    if (chunk.length > 0) this.publish(chunk, []);
  }

  private publish(on: string[], off: string[]): void {
    this.bus.publish(this.bus.subject('presence'), { node: this.nodeId, boot: this.boot, on, off });
  }

  private heard(body: unknown): void {
    if (!Value.Check(PresenceMessage, body)) {
      this.log.warn('cluster presence message with an unexpected shape; ignored');
      return;
    }
    if (body.node === this.nodeId) return;
    let entry = this.byNode.get(body.node);
    if (entry && entry.boot !== body.boot) {
      this.dropNode(body.node);
      entry = undefined;
    }
    if (!entry) {
      entry = { boot: body.boot, uids: new Set() };
      this.byNode.set(body.node, entry);
    }
    const expires = performance.now() + this.ttlMs;
    for (const uid of body.on) {
      let nodes = this.byUid.get(uid);
      if (!nodes) {
        nodes = new Map();
        this.byUid.set(uid, nodes);
      }
      nodes.set(body.node, expires);
      entry.uids.add(uid);
    }
    for (const uid of body.off) this.forget(uid, body.node);
  }

  private forget(uid: string, node: number): void {
    const nodes = this.byUid.get(uid);
    if (nodes?.delete(node) && nodes.size === 0) this.byUid.delete(uid);
    this.byNode.get(node)?.uids.delete(uid);
  }

  /** Every entry of a node that left (or restarted). */
  nodeLeft(m: Pick<Member, 'id'>): void {
    this.dropNode(m.id);
  }

  private dropNode(node: number): void {
    const entry = this.byNode.get(node);
    if (!entry) return;
    for (const uid of entry.uids) {
      const nodes = this.byUid.get(uid);
      if (nodes?.delete(node) && nodes.size === 0) this.byUid.delete(uid);
    }
    this.byNode.delete(node);
  }

  /** The other nodes holding sessions of `uid` now (expired entries are dropped as they are found). */
  nodesOf(uid: string): number[] | undefined {
    const nodes = this.byUid.get(uid);
    if (!nodes) return undefined;
    const now = performance.now();
    let live: number[] | undefined;
    for (const [node, expires] of nodes) {
      if (expires < now) {
        this.forget(uid, node);
        continue;
      }
      (live ??= []).push(node);
    }
    return live;
  }

  /** Uids online on other nodes, by node (for `/debug/cluster`). */
  counts(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [node, entry] of this.byNode) out[String(node)] = entry.uids.size;
    return out;
  }
}
