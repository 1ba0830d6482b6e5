import {
  pressureBand,
  sortAlerts,
  worstVerdict,
  type ConsoleNode,
  type Readyz,
  type TopAlert,
  type TopPressureItem,
  type TopSnapshot,
} from '@parley/shared';
import type { NodeStatus } from '../../api/node-status.ts';

/** Everything the console knows about one node right now. */
export interface NodeView {
  node: ConsoleNode;
  /** Status of the node's top query. */
  status: NodeStatus;
  /** The last snapshot received (possibly stale: see `status`). */
  top?: TopSnapshot;
  /** The last `/readyz` body and its query status. */
  ready?: Readyz;
  readyStatus?: NodeStatus;
}

/** The name an operator knows a node by: the node's own, else the configured one, else host:port. */
export function nodeLabel(v: Pick<NodeView, 'node' | 'top'>): string {
  if (v.top?.node.name) return v.top.node.name;
  if (v.node.name) return v.node.name;
  try {
    return new URL(v.node.url).host;
  } catch {
    return v.node.id;
  }
}

/** Current data: the last request succeeded and is not older than 3 intervals. */
export function isFresh(s: NodeStatus | undefined): boolean {
  return s?.kind === 'ok' && !s.stale;
}

/**
 * Whether a node is ready: from a current snapshot (`node.ready`), else from
 * a current `/readyz` (top disabled or warming up). A node the console cannot
 * reach, or knows nothing current about, is not counted as ready.
 */
export function isReady(v: NodeView): boolean {
  if (v.top && isFresh(v.status)) return v.top.node.ready;
  if (v.status.kind === 'unreachable' || v.status.kind === 'timeout') return false;
  if (v.ready && isFresh(v.readyStatus)) return v.ready.ready;
  return false;
}

/** What a node row's first column says. */
export type Reachability = 'ready' | 'not_ready' | 'stale' | NodeStatus['kind'];

/**
 * A node's state in one word: ready / not ready from current data; else why
 * there is no current data. With top disabled or warming up, readiness comes
 * from `/readyz`.
 */
export function reachability(v: NodeView): Reachability {
  const k = v.status.kind;
  if (k === 'ok') return v.status.stale ? 'stale' : v.top?.node.ready ? 'ready' : 'not_ready';
  if ((k === 'warming_up' || k === 'disabled') && v.ready && isFresh(v.readyStatus)) return v.ready.ready ? 'ready' : 'not_ready';
  return k;
}

/** True when the console has no current word from the node at all. */
export function isUnreachable(v: NodeView): boolean {
  return v.status.kind === 'unreachable' || v.status.kind === 'timeout' || (v.status.kind === 'ok' && v.status.stale);
}

export interface VerdictReason {
  node: string;
  text: string;
}

/** The cluster verdict as the overview shows it. */
export interface Rollup {
  /** Worst verdict among nodes with current data; 'unknown' when none has any. */
  level: string;
  /** Summary of the (first) node holding the worst verdict. */
  summary?: string;
  /** Reasons of every node whose verdict is not ok, with the node's name. */
  reasons: VerdictReason[];
  ready: number;
  total: number;
  /** Nodes whose verdict counted (current data). */
  current: number;
  /** Nodes with no current data: unreachable, timed out, or stale. */
  unreachable: NodeView[];
}

/**
 * The verdict roll-up: the server owns each node's verdict, the console only
 * takes the worst one among nodes it has current data for (like wkcli's
 * aggregate) and counts ready nodes. Nodes it cannot see are listed apart,
 * never scored.
 */
export function rollup(views: readonly NodeView[]): Rollup {
  const fresh = views.filter((v) => v.top && isFresh(v.status));
  const level = worstVerdict(fresh.map((v) => v.top!.verdict.level)) ?? 'unknown';
  const worst = fresh.find((v) => v.top!.verdict.level === level);
  const reasons: VerdictReason[] = [];
  for (const v of fresh) {
    if (v.top!.verdict.level === 'ok') continue;
    for (const text of v.top!.verdict.reasons ?? [v.top!.verdict.summary]) reasons.push({ node: nodeLabel(v), text });
  }
  const unreachable = views.filter(isUnreachable);
  const r: Rollup = { level, reasons, ready: views.filter(isReady).length, total: views.length, current: fresh.length, unreachable };
  if (worst) r.summary = worst.top!.verdict.summary;
  return r;
}

/** One row of the node table (wkcli's columns); numbers are undefined when the node never sent them. */
export interface NodeRow {
  id: string;
  name: string;
  url: string;
  reach: Reachability;
  /** The top query's own state (top disabled or warming up show readiness only). */
  topState: NodeStatus['kind'];
  stale: boolean;
  ageMs?: number;
  verdict?: string;
  connections?: number;
  cpuPercent?: number;
  rssBytes?: number;
  sendPerSec?: number;
  ackPerSec?: number;
  appendP99Ms?: number;
  errorRate?: number;
  topPressure?: { label: string; score: number; level: string };
}

/** "component/pool" (or queue) of a pressure item. */
export function pressureLabel(it: TopPressureItem): string {
  return `${it.component}/${it.pool ?? it.queue ?? 'default'}`;
}

export function nodeRow(v: NodeView): NodeRow {
  const row: NodeRow = {
    id: v.node.id,
    name: nodeLabel(v),
    url: v.node.url,
    reach: reachability(v),
    topState: v.status.kind,
    stale: v.status.stale || (v.status.kind !== 'ok' && v.top !== undefined),
  };
  if (v.status.ageMs !== undefined) row.ageMs = v.status.ageMs;
  const t = v.top;
  if (!t) return row;
  row.verdict = t.verdict.level;
  row.cpuPercent = t.resources.cpu_percent;
  row.rssBytes = t.resources.memory_rss_bytes;
  if (t.clients) row.connections = t.clients.connections;
  if (t.traffic) {
    row.sendPerSec = t.traffic.send_per_sec;
    row.ackPerSec = t.traffic.sendack_per_sec;
    row.appendP99Ms = t.traffic.append_p99_ms;
    row.errorRate = t.traffic.sendack_error_rate;
  }
  const top = [...(t.pressure?.top ?? [])].sort((a, b) => b.score - a.score)[0];
  if (top) row.topPressure = { label: pressureLabel(top), score: top.score, level: top.level };
  return row;
}

export interface HotItem {
  nodeId: string;
  nodeName: string;
  item: TopPressureItem;
  /** The band of the score (0.6 / 0.8 / 0.95), which the server's `level` should match. */
  band: string;
}

/** The `n` highest pressure scores across nodes, highest first. */
export function hotPressure(views: readonly NodeView[], n = 5): HotItem[] {
  const all: HotItem[] = [];
  for (const v of views)
    for (const item of v.top?.pressure?.top ?? [])
      all.push({ nodeId: v.node.id, nodeName: nodeLabel(v), item, band: pressureBand(item.score) });
  return all.sort((a, b) => b.item.score - a.item.score).slice(0, n);
}

export interface NodeAlert extends TopAlert {
  nodeId: string;
  nodeName: string;
}

/** The `n` first active alerts across nodes, in triage order. */
export function activeAlerts(views: readonly NodeView[], n = 5): NodeAlert[] {
  const all: NodeAlert[] = [];
  for (const v of views) for (const a of v.top?.alerts.active ?? []) all.push({ ...a, nodeId: v.node.id, nodeName: nodeLabel(v) });
  return sortAlerts(all).slice(0, n);
}

/** When the newest data shown was received (ms since the epoch), for "updated N s ago". */
export function lastUpdated(stamps: readonly number[]): number | undefined {
  const max = Math.max(0, ...stamps);
  return max > 0 ? max : undefined;
}
