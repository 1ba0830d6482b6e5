import type { TopTraffic } from '@parley/shared';
import type { Histogram } from './histogram.ts';
import type { Ring } from './ring.ts';

/** The samples a request's window covers. */
export interface SampleWindow<S> {
  first: S;
  last: S;
  count: number;
  spanSec: number;
}

interface Stamped {
  mono: number;
}

/**
 * The newest sample and the oldest one no more than `windowMs` before it
 * (with half a percent of slack for timer jitter). Undefined while fewer
 * than two samples fall inside: the collector is warming up.
 */
export function selectWindow<S extends Stamped>(samples: Ring<S>, windowMs: number): SampleWindow<S> | undefined {
  const n = samples.size;
  const last = samples.at(n - 1);
  if (!last) return undefined;
  const from = last.mono - windowMs * 1.005;
  let i = n - 1;
  while (i > 0 && samples.at(i - 1)!.mono >= from) i--;
  const count = n - i;
  if (count < 2) return undefined;
  const first = samples.at(i)!;
  return { first, last, count, spanSec: (last.mono - first.mono) / 1000 };
}

/** Counters and histogram copies the traffic section is computed from. */
export interface TrafficSample extends Stamped {
  sends: number;
  acks: number;
  ackErrors: number;
  appends: number;
  fanouts: number;
  deliveries: number;
  appendWait: Float64Array;
}

export const round = (n: number, digits = 3): number => (Number.isFinite(n) ? Math.round(n * 10 ** digits) / 10 ** digits : 0);

/** Rate of a cumulative counter between two samples, per second. */
export const perSec = (after: number, before: number, spanSec: number): number => (spanSec > 0 ? round((after - before) / spanSec) : 0);

export function trafficOf(h: { appendWait: Histogram }, first: TrafficSample, last: TrafficSample, spanSec: number): TopTraffic {
  const acks = last.acks - first.acks;
  const errors = last.ackErrors - first.ackErrors;
  const fanouts = last.fanouts - first.fanouts;
  return {
    send_per_sec: perSec(last.sends, first.sends, spanSec),
    sendack_per_sec: perSec(last.acks, first.acks, spanSec),
    sendack_error_per_sec: perSec(last.ackErrors, first.ackErrors, spanSec),
    sendack_error_rate: acks + errors > 0 ? round(errors / (acks + errors), 4) : 0,
    append_per_sec: perSec(last.appends, first.appends, spanSec),
    append_p50_ms: round(h.appendWait.quantile(last.appendWait, first.appendWait, 0.5)),
    append_p99_ms: round(h.appendWait.quantile(last.appendWait, first.appendWait, 0.99)),
    deliver_per_sec: perSec(last.deliveries, first.deliveries, spanSec),
    fanout_rate: fanouts > 0 ? round((last.deliveries - first.deliveries) / fanouts) : 0,
  };
}
