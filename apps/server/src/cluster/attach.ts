import type { Logger } from 'pino';
import { StaleEpochError, type Store } from '@parley/store';
import type { Config } from '../config/config.ts';
import type { ClusterRuntime, ClusterServices } from './cluster.ts';

/**
 * Starts the node's cluster runtime when `cluster.enabled`, over the
 * store's slot leases, and fences every append with the epoch of its
 * channel's slot. Undefined (nothing changes) for a single node.
 */
export async function attachCluster(
  config: Config,
  services: ClusterServices,
  store: Store,
  log: Logger,
): Promise<ClusterRuntime | undefined> {
  if (!config.cluster.enabled) return undefined;
  // The cluster runtime (and the NATS client under it) is loaded only here: a
  // single node never loads it.
  const { ClusterRuntime } = await import('./cluster.ts');
  const runtime = await ClusterRuntime.start(
    config,
    services,
    store.leases,
    store.clusterNodes,
    (err) => (err instanceof StaleEpochError ? err.fence.slot : undefined),
    log,
  );
  const { slots } = runtime;
  log.info(
    { clusterId: config.cluster.id, slots: slots.heldSlots(), nodes: runtime.members.liveIds() },
    'cluster: joined (PostgreSQL store, NATS bus)',
  );
  return runtime;
}
