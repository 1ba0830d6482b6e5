import type { Readyz, TopSnapshot } from '@parley/shared';

/**
 * Readiness parts to show: `/readyz`'s own `parts` when it sends them, else
 * the snapshot's `node.ready_parts`. The keys are whatever the node reports
 * (the contract's routes / slots / channels, plus any extra part).
 */
export function readinessParts(ready: Readyz | undefined, top: TopSnapshot | undefined): [string, boolean][] {
  const parts = ready?.parts ?? top?.node.ready_parts ?? {};
  return Object.entries(parts).sort(([a], [b]) => a.localeCompare(b));
}

/** Connections by protocol, largest first. */
export function protocolRows(top: TopSnapshot | undefined): [string, number][] {
  return Object.entries(top?.clients?.connections_by_protocol ?? {}).sort(([, a], [, b]) => b - a);
}
