import { TOP_VIEWS, type TopQuery, type TopView } from '@parley/shared';
import { invalid } from '../errors.ts';
import { parseGoDuration } from './go-duration.ts';
import type { SnapshotQuery } from './snapshot.ts';

export const TOP_DEFAULTS = { windowMs: 10_000, view: 'overview' as TopView, limit: 20 };
export const TOP_MIN_WINDOW_MS = 2000;
export const TOP_MAX_LIMIT = 100;

/**
 * Checks the snapshot query the way WuKongIM does: an empty value means the
 * default; `window` is a Go duration of at least 2s; `view` one of the
 * seven; `limit` a positive integer, clamped to 100. A bad value is a 400.
 */
export function parseTopQuery(q: TopQuery): SnapshotQuery {
  let windowMs = TOP_DEFAULTS.windowMs;
  if (q.window) {
    const ms = parseGoDuration(q.window);
    if (ms === undefined) throw invalid('window must be a duration', 'invalid_window');
    if (ms < TOP_MIN_WINDOW_MS) throw invalid('window must be at least 2s', 'invalid_window');
    windowMs = ms;
  }
  let view = TOP_DEFAULTS.view;
  if (q.view) {
    if (!(TOP_VIEWS as readonly string[]).includes(q.view)) throw invalid('invalid view', 'invalid_view');
    view = q.view as TopView;
  }
  let limit = TOP_DEFAULTS.limit;
  if (q.limit) {
    const n = /^[+-]?\d{1,18}$/.test(q.limit) ? Number(q.limit) : NaN;
    if (!Number.isSafeInteger(n) || n <= 0) throw invalid('limit must be positive', 'invalid_limit');
    limit = Math.min(n, TOP_MAX_LIMIT);
  }
  return { windowMs, view, limit };
}
