/** Readiness as `/readyz` and the top snapshot's `node` report it. */
export interface Readiness {
  ready: boolean;
  /** Set when not ready: the reasons of the parts that are down, comma-separated. */
  reason?: string;
  /** The contract's parts `routes`, `slots`, `channels`: true = ready. */
  parts: Record<string, boolean>;
}

/** What readiness checks, each against the real thing. */
export interface ReadinessProbes {
  /** Both gateway listeners (WebSocket and TCP) accept connections. */
  gatewaysListening(): boolean;
  /** Resolves when the store answers a metadata read. */
  storeReadable(): Promise<void>;
  /** Resolves when the store can take its write lock, i.e. can commit messages. */
  storeWritable(): Promise<void>;
  /** Cluster mode: the bus (NATS) is connected and the slot map is current. */
  cluster?: { busConnected(): boolean; slotMapCurrent(): boolean };
}

/**
 * The contract's verdict reason of each part. WuKongIM's parts describe a
 * cluster; on a Parley node (a one-node cluster) they mean:
 * - `routes`: clients can be routed here, i.e. the gateway listeners accept connections;
 * - `slots`: the metadata (channels, tokens, memberships) can be read;
 * - `channels`: the channel logs can take appends, i.e. the store can commit.
 * In cluster mode two more parts must hold:
 * - `bus`: the node is connected to NATS (forwarding, deliveries, presence);
 * - `slot_map`: the slot map (lease owners) was read from the store within one lease TTL.
 */
export const READY_PART_REASONS: Readonly<Record<string, string>> = {
  routes: 'routes not ready',
  slots: 'slots not ready',
  channels: 'channel not ready',
  bus: 'cluster bus not connected',
  slot_map: 'slot map not current',
};

/** The verdict / alert text of a part that is down (`<part> not ready` for parts outside the contract). */
export function partDownReason(part: string): string {
  return READY_PART_REASONS[part] ?? `${part} not ready`;
}

/** A probe failure whose message says why (shown after the part's reason in `/readyz`). */
export class ProbeFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProbeFailure';
  }
}

/** Runs a probe: undefined when it passes, else the detail to show ('' when there is none). */
async function failure(probe: () => Promise<void>): Promise<string | undefined> {
  try {
    await probe();
    return undefined;
  } catch (err) {
    return err instanceof ProbeFailure ? err.message : '';
  }
}

/** Runs the probes; a store that cannot be read is not probed for writing (it cannot commit either). */
export async function checkReadiness(probes: ReadinessProbes): Promise<Readiness> {
  const routes = probes.gatewaysListening();
  const slotsDown = await failure(probes.storeReadable);
  const channelsDown = slotsDown === undefined ? await failure(probes.storeWritable) : '';
  const parts: Record<string, boolean> = { routes, slots: slotsDown === undefined, channels: channelsDown === undefined };
  if (probes.cluster) {
    parts.bus = probes.cluster.busConnected();
    parts.slot_map = probes.cluster.slotMapCurrent();
  }
  const details: Record<string, string | undefined> = { slots: slotsDown, channels: channelsDown };
  const down = Object.entries(parts).filter(([, up]) => !up);
  if (down.length === 0) return { ready: true, parts };
  const reason = down.map(([part]) => (details[part] ? `${partDownReason(part)}: ${details[part]}` : partDownReason(part))).join(', ');
  return { ready: false, reason, parts };
}
