import type { AlertCondition } from './alerts.ts';

/** What an operator should look at when sessions keep failing. */
const HINT =
  'check close_reason: auth means clients present bad tokens, protocol a client sending what the gateway cannot accept, backpressure clients that stop reading';

/** A window span as Go prints a duration: `850ms`, `10s`, `12.5s`. */
function spanText(spanSec: number): string {
  return spanSec < 1 ? `${Math.round(spanSec * 1000)}ms` : `${Math.round(spanSec * 10) / 10}s`;
}

/**
 * The `session_error` alert (http-api.md §5: error severity, gateway close
 * reasons): raised while sessions were closed for an error inside the alert
 * window, naming the most frequent `protocol / close_reason / class` and its
 * count. `first` and `last` are the cumulative counters
 * (`<protocol>.<close_reason>.<class>`) at the window's ends.
 */
export function sessionErrorCondition(
  first: ReadonlyMap<string, number>,
  last: ReadonlyMap<string, number>,
  spanSec: number,
): AlertCondition | undefined {
  let worst = '';
  let worstCount = 0;
  for (const [key, total] of last) {
    const count = total - (first.get(key) ?? 0);
    if (count > worstCount || (count === worstCount && count > 0 && key < worst)) {
      worst = key;
      worstCount = count;
    }
  }
  if (worstCount === 0) return undefined;
  const [protocol = '', closeReason = '', cls = ''] = worst.split('.');
  return {
    severity: 'error',
    component: 'gateway',
    kind: 'session_error',
    message: 'gateway session errors observed',
    hint: HINT,
    evidence: { protocol, close_reason: closeReason, class: cls, count: String(worstCount), window: spanText(spanSec) },
  };
}
