import type { DebugConfig, DiagnosticsResult } from '@parley/shared';

/** The config's effective keys as sorted pairs, values shown as text (secrets arrive redacted). */
export function configPairs(config: Pick<DebugConfig, 'values'>): [string, string][] {
  return Object.entries(config.values)
    .map(([k, v]): [string, string] => [k, String(v)])
    .sort(([a], [b]) => a.localeCompare(b));
}

/** A message lookup's query: a client message number, or a channel key with a sequence. */
export function messageQuery(input: {
  clientMsgNo: string;
  channelKey: string;
  messageSeq: string;
}): Record<string, string> | { error: 'one_selector' } {
  const clientMsgNo = input.clientMsgNo.trim();
  const channelKey = input.channelKey.trim();
  const seq = input.messageSeq.trim();
  if (clientMsgNo && !channelKey && !seq) return { client_msg_no: clientMsgNo };
  if (!clientMsgNo && channelKey && /^[1-9]\d*$/.test(seq)) return { channel_key: channelKey, message_seq: seq };
  return { error: 'one_selector' };
}

/** Events newest first, with their duration in ms (the route gives nanoseconds). */
export function eventRows(result: Pick<DiagnosticsResult, 'events'>): (DiagnosticsResult['events'][number] & { durationMs?: number })[] {
  return [...result.events]
    .sort((a, b) => Date.parse(b.at) - Date.parse(a.at))
    .map((e) => (e.duration === undefined ? e : { ...e, durationMs: e.duration / 1e6 }));
}
