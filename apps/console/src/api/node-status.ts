import { OpsFailure, type FailureKind } from './ops.ts';

/** What one node's query looks like right now. */
export interface NodeStatus {
  kind: 'loading' | 'ok' | FailureKind;
  /** The data shown is not current: the last request failed, or none succeeded for 3 × interval. */
  stale: boolean;
  /** Age of the data shown, ms (undefined when there is none). */
  ageMs?: number;
  /** Failure detail (node message or first schema error). */
  detail?: string;
}

/** The fields of a react-query result this needs. */
export interface QueryLike {
  data?: unknown;
  error?: unknown;
  dataUpdatedAt: number;
  isPending?: boolean;
}

/** Data older than this many refresh intervals without a success is stale. */
export const STALE_INTERVALS = 3;

/**
 * A node's status from its query: the failure of the last attempt wins
 * (its last data, if any, is kept and marked stale); otherwise data older
 * than 3 × the refresh interval is stale too (a node that stopped answering
 * slowly). With refresh off, data never turns stale by age.
 */
export function nodeStatus(q: QueryLike, now: number, intervalMs: number): NodeStatus {
  const hasData = q.data !== undefined;
  const ageMs = hasData && q.dataUpdatedAt > 0 ? Math.max(0, now - q.dataUpdatedAt) : undefined;
  if (q.error) {
    const kind: FailureKind = q.error instanceof OpsFailure ? q.error.kind : 'unreachable';
    const detail = q.error instanceof OpsFailure ? q.error.detail : String((q.error as Error).message ?? q.error);
    return { kind, stale: hasData, ageMs, detail };
  }
  if (!hasData) return { kind: 'loading', stale: false };
  const stale = intervalMs > 0 && ageMs !== undefined && ageMs > STALE_INTERVALS * intervalMs;
  return { kind: 'ok', stale, ageMs };
}
