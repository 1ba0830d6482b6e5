import type { Delivery } from './delivery.ts';
import type { MessagingEvents } from './events.ts';

/** An authenticated connection, whatever its protocol. */
export interface SessionHandle {
  readonly id: number;
  readonly uid: string;
  readonly deviceFlag: number;
  readonly deviceId: string;
  readonly deviceLevel: number;
  readonly protocol: 'jsonrpc' | 'wkproto';
  /** Queues one RECV for this session; never throws. */
  deliver(delivery: Delivery): void;
  /** Tells the client it was kicked (DISCONNECT), then closes after a grace period. */
  kick(reasonCode: number, reason: string): void;
  /** Closes the connection without a DISCONNECT. */
  close(reason: string): void;
}

/**
 * The node's directory of online sessions by uid. Fan-out reads it for every
 * message, so lookups are one map access.
 */
export class Presence {
  private readonly byUid = new Map<string, Set<SessionHandle>>();
  private total = 0;
  /** Cluster mode: told when a uid's first session here opens (`online`) or its last one closes. */
  onUidChange: ((uid: string, online: boolean) => void) | undefined;

  constructor(private readonly events: MessagingEvents = {}) {}

  get connections(): number {
    return this.total;
  }

  add(session: SessionHandle): void {
    let set = this.byUid.get(session.uid);
    if (!set) {
      set = new Set();
      this.byUid.set(session.uid, set);
      this.onUidChange?.(session.uid, true);
    }
    if (!set.has(session)) {
      set.add(session);
      this.total++;
      this.events.sessionChanged?.(session, true, set.size, this.total);
    }
  }

  remove(session: SessionHandle): void {
    const set = this.byUid.get(session.uid);
    if (!set?.delete(session)) return;
    this.total--;
    if (set.size === 0) {
      this.byUid.delete(session.uid);
      this.onUidChange?.(session.uid, false);
    }
    this.events.sessionChanged?.(session, false, set.size, this.total);
  }

  /** Every uid with a session on this node. */
  uids(): IterableIterator<string> {
    return this.byUid.keys();
  }

  sessionsOf(uid: string): ReadonlySet<SessionHandle> | undefined {
    return this.byUid.get(uid);
  }

  /** Sessions of `uid` with one of the given device flags. */
  sessionsOfDevices(uid: string, deviceFlags: readonly number[]): SessionHandle[] {
    return [...(this.byUid.get(uid) ?? [])].filter((s) => deviceFlags.includes(s.deviceFlag));
  }

  /**
   * The sessions a new login replaces: for a master login every other session
   * of the same (uid, device_flag); for a slave only the same device id.
   */
  conflicting(uid: string, deviceFlag: number, deviceId: string, deviceLevel: number): SessionHandle[] {
    return [...(this.byUid.get(uid) ?? [])].filter((s) => s.deviceFlag === deviceFlag && (deviceLevel === 1 || s.deviceId === deviceId));
  }
}
