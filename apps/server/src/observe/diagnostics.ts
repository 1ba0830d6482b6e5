import { DIAGNOSTIC_RESULTS, type DiagnosticEvent, type DiagnosticsQuery, type DiagnosticsResult } from '@parley/shared';
import type { CommitRecord } from '../messaging/append-queue.ts';
import { invalid } from '../errors.ts';
import { Ring } from './ring.ts';

/** Events kept in memory; the oldest are dropped first. */
export const DIAGNOSTICS_CAPACITY = 8192;
export const DIAGNOSTICS_DEFAULT_LIMIT = 100;
export const DIAGNOSTICS_MAX_LIMIT = 500;

interface Stored {
  event: DiagnosticEvent;
  /** Sender uid, kept for the `uid` filter only; never emitted. */
  uid?: string;
}

/** A diagnostics query problem: a 400 with code `invalid_query`. */
const badQuery = (message: string) => invalid(message, 'invalid_query');

export const channelKeyOf = (channelId: string, channelType: number): string => `${channelType}&${channelId}`;

function parseLimit(raw: string | undefined): number {
  if (raw === undefined || raw === '') return DIAGNOSTICS_DEFAULT_LIMIT;
  const n = /^\d{1,6}$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= 1 && n <= DIAGNOSTICS_MAX_LIMIT)) throw badQuery('invalid limit');
  return n;
}

/**
 * A bounded in-memory store of recent message traces: one `append` event per
 * message (trace id = its message id) and one `commit` event per batch.
 * Queried by trace id, by message and by filters.
 */
export class DiagnosticsStore {
  private readonly events = new Ring<Stored>(DIAGNOSTICS_CAPACITY);

  constructor(private readonly nodeId: number) {}

  /** Records a committed batch (wired to `AppendQueue.onCommit`). */
  recordCommit(commitMs: number, records: readonly CommitRecord[], queueDepth: number): void {
    const at = new Date().toISOString();
    this.events.push({
      event: {
        stage: 'commit',
        at,
        duration: Math.round(commitMs * 1e6),
        node_id: this.nodeId,
        result: 'ok',
        record_count: records.length,
        queue_depth: queueDepth,
      },
    });
    for (const { message: m, result, waitMs } of records) {
      const event: DiagnosticEvent = {
        trace_id: m.messageId.toString(),
        stage: 'append',
        at,
        duration: Math.round(waitMs * 1e6),
        node_id: this.nodeId,
        channel_key: channelKeyOf(m.channelId, m.channelType),
        client_msg_no: m.clientMsgNo,
        result: result.kind === 'appended' ? 'ok' : result.kind === 'duplicate' ? 'skipped' : 'error',
        byte_count: m.payload.length,
      };
      if (result.kind !== 'conflict') {
        event.message_seq = result.messageSeq;
        if (result.kind === 'duplicate') event.trace_id = result.messageId.toString();
      } else event.error_code = 'idempotency_conflict';
      this.events.push({ event, uid: m.fromUid });
    }
  }

  byTrace(traceId: string, q: DiagnosticsQuery): DiagnosticsResult {
    const limit = parseLimit(q.limit);
    return this.result({ trace_id: traceId }, { trace_id: traceId, limit }, (s) => s.event.trace_id === traceId, limit);
  }

  byMessage(q: DiagnosticsQuery): DiagnosticsResult {
    const limit = parseLimit(q.limit);
    const byNo = q.client_msg_no !== undefined && q.client_msg_no !== '';
    const byKey = (q.channel_key !== undefined && q.channel_key !== '') || (q.message_seq !== undefined && q.message_seq !== '');
    if (byNo && byKey) throw badQuery('invalid message selector');
    if (!byNo && !byKey) throw badQuery('missing diagnostics message lookup');
    if (byNo) {
      const no = q.client_msg_no!;
      return this.result({ client_msg_no: no }, { client_msg_no: no, limit }, (s) => s.event.client_msg_no === no, limit);
    }
    const seq = /^\d{1,15}$/.test(q.message_seq ?? '') ? Number(q.message_seq) : 0;
    if (!(seq > 0)) throw badQuery('invalid message_seq');
    if (!q.channel_key) throw badQuery('missing diagnostics message lookup');
    const key = q.channel_key;
    return this.result(
      { channel_key: key, message_seq: seq },
      { channel_key: key, message_seq: seq, limit },
      (s) => s.event.channel_key === key && s.event.message_seq === seq,
      limit,
    );
  }

  search(q: DiagnosticsQuery): DiagnosticsResult {
    const limit = parseLimit(q.limit);
    if (q.result && !(DIAGNOSTIC_RESULTS as readonly string[]).includes(q.result)) throw badQuery('invalid result');
    const query: Record<string, string | number> = { limit };
    for (const k of ['stage', 'uid', 'channel_key', 'result'] as const) if (q[k]) query[k] = q[k]!;
    const match = (s: Stored) =>
      (!q.stage || s.event.stage === q.stage) &&
      (!q.uid || s.uid === q.uid) &&
      (!q.channel_key || s.event.channel_key === q.channel_key) &&
      (!q.result || s.event.result === q.result);
    return this.result(q.uid ? { uid: q.uid } : {}, query, match, limit);
  }

  private result(
    selector: Partial<DiagnosticsResult>,
    query: Record<string, string | number>,
    match: (s: Stored) => boolean,
    limit: number,
  ): DiagnosticsResult {
    const found: DiagnosticEvent[] = [];
    for (const s of this.events.toArray().reverse()) {
      if (!match(s)) continue;
      found.push(s.event);
      if (found.length >= limit) break;
    }
    found.reverse();
    const summary: DiagnosticsResult['summary'] = {};
    let slowest: DiagnosticEvent | undefined;
    for (const e of found) {
      if (e.duration !== undefined && (slowest?.duration === undefined || e.duration > slowest.duration)) slowest = e;
      if (e.result === 'error' && summary.error_stage === undefined) {
        summary.error_stage = e.stage;
        if (e.error_code) summary.error_code = e.error_code;
      }
    }
    if (slowest) {
      summary.slowest_stage = slowest.stage;
      summary.slowest_duration_ms = (slowest.duration ?? 0) / 1e6;
    }
    const status = found.length === 0 ? 'not_found' : summary.error_stage ? 'error' : 'ok';
    const out: DiagnosticsResult = { scope: 'local_node', node_id: this.nodeId, ...selector, query, status, summary, events: found };
    if (found.length > 0) out.started_at = found[0]!.at;
    out.notes = [`in-memory store of the last ${DIAGNOSTICS_CAPACITY} events; from_uid is never recorded`];
    return out;
  }
}
