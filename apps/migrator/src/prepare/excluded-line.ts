import type { JsonlWriter } from '../archive/jsonl.ts';
import { jsonString, writeMessageTail } from '../archive/record-json.ts';
import type { RawMessage } from '../v2/scan-shard.ts';

/**
 * Writes an excluded-record line for a message (`ExcludedRecord`): kind,
 * reason, place, key and (when a plan entry binds it) digest, then the
 * message's own line as `record` — `head` and the row's tail, already
 * encoded (a worker's bytes, newline last) or encoded here.
 */
export function writeExcludedMessage(
  o: JsonlWriter,
  e: { reason: string; node_id: number; shard: number; key: string; sha256?: string; head: string },
  row: RawMessage | Uint8Array,
): void {
  o.text(
    `{"kind":"message","reason":${jsonString(e.reason)},"node_id":${e.node_id},"shard":${e.shard},"key":"${e.key}"${e.sha256 ? `,"sha256":"${e.sha256}"` : ''},"record":`,
  );
  o.text(e.head);
  if (row instanceof Uint8Array) o.bytes(row.subarray(0, row.length - 1));
  else {
    writeMessageTail(o, row);
    o.used--; // the tail's newline: the record closes first
  }
  o.text('}\n');
  o.endLine();
}
