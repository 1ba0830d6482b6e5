import { Buffer } from 'node:buffer';
import type { MessageEvent } from '@parley/store';

/** Lanes listed per message at most (the reserved `__finish__` lane is never listed). */
export const MAX_LANES = 32;
const FINISH_LANE = '__finish__';
const MAIN_LANE = 'main';

export interface LaneSummary {
  event_key: string;
  status: 'open' | 'closed' | 'error' | 'cancelled';
  last_msg_event_seq: number;
  /** The lane's accumulated content (full summary mode only). */
  snapshot?: unknown;
  end_reason: number;
  error?: string;
}

export interface EventMeta {
  has_events: boolean;
  completed: boolean;
  event_version: number;
  last_msg_event_seq: number;
  event_count: number;
  open_event_count: number;
  events: LaneSummary[];
}

/** What a stream message carries in a pull when event meta is requested. */
export interface StreamFields {
  event_meta: EventMeta;
  event_sync_hint: { client_msg_no: string; from_msg_event_seq: number };
  stream_data?: string;
  end?: number;
  end_reason?: number;
  error?: string;
}

/** `end_reason` codes: why a lane ended. */
export const EndReason = { closed: 0, error: 1, cancelled: 2 } as const;

/** Event types of a stream, and the status each one leaves its lane in. */
export const STREAM_STATUS: Record<string, LaneSummary['status']> = {
  'stream.open': 'open',
  'stream.delta': 'open',
  'stream.snapshot': 'open',
  'stream.close': 'closed',
  'stream.finish': 'closed',
  'stream.error': 'error',
  'stream.cancel': 'cancelled',
};

interface Lane {
  summary: LaneSummary;
  text: string;
  /** The last snapshot payload that was not text, if any. */
  value: unknown;
}

function textOf(payload: unknown, field: 'delta' | 'text'): string | undefined {
  if (typeof payload === 'string') return payload;
  if (payload && typeof payload === 'object') {
    const v = (payload as Record<string, unknown>)[field] ?? (payload as Record<string, unknown>).text;
    if (typeof v === 'string') return v;
  }
  return undefined;
}

function errorOf(payload: unknown): string | undefined {
  if (typeof payload === 'string') return payload;
  if (payload && typeof payload === 'object') {
    const p = payload as Record<string, unknown>;
    for (const k of ['error', 'message', 'reason']) if (typeof p[k] === 'string') return p[k] as string;
  }
  return undefined;
}

/**
 * Folds a message's events (in seq order) into per-lane summaries. Text
 * lanes accumulate: `stream.delta` appends its `delta` (or `text`, or a string
 * payload), `stream.snapshot` replaces with its `text` (or keeps a non-text
 * payload as the snapshot). The main lane's text is `stream_data`; its end
 * marks the message `end`.
 */
export function summarizeEvents(clientMsgNo: string, events: readonly MessageEvent[], full: boolean): StreamFields {
  const lanes = new Map<string, Lane>();
  let completed = false;
  let last = 0;
  for (const e of events) {
    last = Math.max(last, e.eventSeq);
    if (e.eventKey === FINISH_LANE) {
      completed = true;
      continue;
    }
    let lane = lanes.get(e.eventKey);
    if (!lane) {
      lane = { summary: { event_key: e.eventKey, status: 'open', last_msg_event_seq: 0, end_reason: 0 }, text: '', value: undefined };
      lanes.set(e.eventKey, lane);
    }
    const payload: unknown = JSON.parse(e.payload);
    lane.summary.status = STREAM_STATUS[e.eventType] ?? lane.summary.status;
    lane.summary.last_msg_event_seq = e.eventSeq;
    if (e.eventType === 'stream.delta') lane.text += textOf(payload, 'delta') ?? '';
    else if (e.eventType === 'stream.snapshot') {
      const text = textOf(payload, 'text');
      if (text !== undefined) lane.text = text;
      else lane.value = payload;
    } else if (e.eventType === 'stream.error' || e.eventType === 'stream.cancel') {
      lane.summary.end_reason = e.eventType === 'stream.error' ? EndReason.error : EndReason.cancelled;
      const err = errorOf(payload);
      if (err !== undefined) lane.summary.error = err;
    }
  }
  const listed = [...lanes.values()].slice(0, MAX_LANES).map((l) => ({
    ...l.summary,
    ...(full ? { snapshot: l.value !== undefined && l.text === '' ? l.value : { kind: 'text', text: l.text } } : {}),
  }));
  const main = lanes.get(MAIN_LANE);
  const out: StreamFields = {
    event_meta: {
      has_events: events.length > 0,
      completed,
      event_version: last,
      last_msg_event_seq: last,
      event_count: events.length,
      open_event_count: [...lanes.values()].filter((l) => l.summary.status === 'open').length,
      events: listed,
    },
    event_sync_hint: { client_msg_no: clientMsgNo, from_msg_event_seq: 0 },
  };
  if (main && main.text !== '') out.stream_data = Buffer.from(main.text, 'utf8').toString('base64');
  if (main && main.summary.status !== 'open') {
    out.end = 1;
    if (main.summary.end_reason !== 0) out.end_reason = main.summary.end_reason;
    if (main.summary.error) out.error = main.summary.error;
  }
  return out;
}
