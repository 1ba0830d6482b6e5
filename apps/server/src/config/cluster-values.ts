import { parseDuration } from './duration.ts';
import type { ConfigValues } from './options.ts';

/** Reading and checking the `cluster.*` keys. */

/** The NATS servers `cluster.nats_url` names (its default when empty). */
export function natsServersOf(url: string): string[] {
  const list = url
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  return list.length > 0 ? list : ['nats://127.0.0.1:4222'];
}

/** A cluster id becomes a NATS subject token: letters, digits, `_` and `-` only. */
const CLUSTER_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** Checks across `cluster.*` (and the store it needs) that the per-key types cannot express. */
export function clusterProblems(v: ConfigValues): string[] {
  const c = v.cluster;
  const problems: string[] = [];
  if (parseDuration(c.slot_lease_ttl)! < 2000) problems.push('cluster.slot_lease_ttl must be at least 2s');
  if (parseDuration(c.node_timeout)! < 300) problems.push('cluster.node_timeout must be at least 300ms');
  if (parseDuration(c.presence_ttl)! < 1000) problems.push('cluster.presence_ttl must be at least 1s');
  if (parseDuration(c.forward_timeout)! < 100) problems.push('cluster.forward_timeout must be at least 100ms');
  for (const url of natsServersOf(c.nats_url)) {
    // The URL itself is never repeated: it may carry credentials.
    if (!/^(nats|tls):\/\//i.test(url) || !URL.canParse(url))
      problems.push('cluster.nats_url: each server must be a nats:// or tls:// URL');
  }
  if (!c.enabled) return problems;
  if (v.store.driver !== 'postgres') {
    problems.push(
      'cluster.enabled needs store.driver = "postgres" (with store.postgres_url): the nodes of a cluster share one PostgreSQL store; the embedded SQLite file belongs to one node',
    );
  }
  if (!CLUSTER_ID.test(c.id)) {
    problems.push('cluster.enabled needs cluster.id: 1-64 characters of A-Z a-z 0-9 _ - (it prefixes the NATS subjects)');
  }
  return problems;
}
