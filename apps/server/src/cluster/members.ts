import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { Logger } from 'pino';
import { BusRequestError, type Bus } from './bus.ts';

/** What a node says about itself in every heartbeat. */
export const Heartbeat = Type.Object({
  id: Type.Integer({ minimum: 1, maximum: 1023 }),
  /** Random per process start: a restarted node is a new member. */
  boot: Type.String({ maxLength: 64 }),
  name: Type.String({ maxLength: 256 }),
  /** The node's HTTP API address as its operators reach it (`host:port`). */
  api: Type.String({ maxLength: 300 }),
  ready: Type.Boolean(),
  /** Physical slots it holds. */
  slots: Type.Array(Type.Integer({ minimum: 0, maximum: 1023 }), { maxItems: 1024 }),
});
export type Heartbeat = Static<typeof Heartbeat>;

/** A member as this node last heard it. */
export interface Member extends Heartbeat {
  /** `performance.now()` of its first heartbeat under this boot. */
  joinedAt: number;
  /** `performance.now()` of its latest heartbeat. */
  seenAt: number;
}

export interface MemberEvents {
  /** A node appeared, or restarted (new boot). */
  joined?(m: Member): void;
  /** A node's heartbeats stopped (or it restarted: left, then joined). */
  left?(m: Member): void;
}

/**
 * Who is in the cluster: every node publishes a heartbeat every third of
 * `cluster.node_timeout` and counts as live while it has been heard within
 * that timeout. Answers `whois` for its own node id, so a second process
 * started with the same `node.id` is refused (two nodes with one id would mint
 * colliding message ids).
 */
export class Members {
  readonly boot = randomUUID();
  private readonly others = new Map<number, Member>();
  private timer: NodeJS.Timeout | undefined;
  private readonly startedAt = performance.now();

  constructor(
    private readonly bus: Bus,
    private readonly self: () => Omit<Heartbeat, 'boot'>,
    private readonly timeoutMs: number,
    private readonly log: Logger,
    private readonly events: MemberEvents = {},
  ) {}

  get id(): number {
    return this.self().id;
  }

  /**
   * Refuses to run when a live node already answers for this node id. A
   * killed node answers nothing, so its restart is not refused.
   */
  async assertIdFree(): Promise<void> {
    try {
      const answer = (await this.bus.request(this.bus.subject('node', this.id, 'whois'), {}, Math.min(1000, this.timeoutMs))) as {
        boot?: string;
        name?: string;
      };
      throw new Error(
        `node.id ${this.id} is already used by a live node of this cluster (${answer?.name ?? 'unnamed'}); every node needs its own node.id`,
      );
    } catch (err) {
      if (err instanceof BusRequestError && (err.kind === 'no_responders' || err.kind === 'timeout')) return;
      throw err;
    }
  }

  start(): void {
    this.bus.subscribe(this.bus.subject('node', this.id, 'whois'), () => ({ boot: this.boot, name: this.self().name }));
    this.bus.subscribe(this.bus.subject('hb'), (body) => this.heard(body));
    this.beat();
    this.timer = setInterval(
      () => {
        this.beat();
        this.expire();
      },
      Math.max(50, Math.floor(this.timeoutMs / 3)),
    );
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Publishes this node's heartbeat now (also after its slots change). */
  beat(): void {
    this.bus.publish(this.bus.subject('hb'), { ...this.self(), boot: this.boot });
  }

  private heard(body: unknown): void {
    if (!Value.Check(Heartbeat, body)) {
      this.log.warn('cluster heartbeat with an unexpected shape; ignored');
      return;
    }
    if (body.id === this.id) {
      if (body.boot !== this.boot) this.log.error({ nodeId: body.id }, 'another process announces this node.id; node ids must be unique');
      return;
    }
    const now = performance.now();
    const known = this.others.get(body.id);
    if (known && known.boot !== body.boot) {
      this.others.delete(body.id);
      this.events.left?.(known);
    }
    const current = this.others.get(body.id);
    if (current) {
      Object.assign(current, body, { seenAt: now });
      return;
    }
    const m: Member = { ...body, joinedAt: now, seenAt: now };
    this.others.set(body.id, m);
    this.log.info({ nodeId: m.id, nodeName: m.name }, 'cluster node joined');
    this.events.joined?.(m);
  }

  private expire(): void {
    const now = performance.now();
    for (const [id, m] of this.others) {
      if (now - m.seenAt <= this.timeoutMs) continue;
      this.others.delete(id);
      this.log.warn({ nodeId: id, nodeName: m.name }, 'cluster node gone (no heartbeat)');
      this.events.left?.(m);
    }
  }

  /** Other live nodes. */
  peers(): Member[] {
    return [...this.others.values()].sort((a, b) => a.id - b.id);
  }

  /** Every live node id, this one included, ascending. */
  liveIds(): number[] {
    return [this.id, ...this.others.keys()].sort((a, b) => a - b);
  }

  isLive(id: number): boolean {
    return id === this.id || this.others.has(id);
  }

  /** How long (ms) node `id` has been live; this node counts from its own start. */
  liveForMs(id: number): number {
    if (id === this.id) return performance.now() - this.startedAt;
    const m = this.others.get(id);
    return m ? performance.now() - m.joinedAt : 0;
  }
}
