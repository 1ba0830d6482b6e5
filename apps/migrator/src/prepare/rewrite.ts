import { renameSync, rmSync } from 'node:fs';
import { JsonlWriter } from '../archive/jsonl.ts';
import { jsonString } from '../archive/record-json.ts';
import { channelHash } from '../v2/hash.ts';
import type { MessageRecord } from '../v2/records.ts';
import type { TailState } from './collector.ts';
import type { Drops } from './dedupe.ts';
import { aggregateKey } from './raw-row.ts';
import { readLines } from './read-lines.ts';

/**
 * Takes the rows deduplication drops out of a finished messages file: the
 * file is written again without them (a new writer, so its digest is of what
 * remains) and each dropped line goes, complete, to the excluded records.
 * Tail counts follow. Returns the new writer and how many rows moved.
 */
export async function applyDrops(
  path: string,
  drops: Drops,
  excludedOut: JsonlWriter,
  tails: Map<string, TailState>,
): Promise<{ writer: JsonlWriter; moved: number }> {
  const old = `${path}.before-drops`;
  renameSync(path, old);
  const writer = new JsonlWriter(path);
  let moved = 0;
  for (const line of readLines(old)) {
    const m = JSON.parse(line) as MessageRecord;
    const ch = channelHash(m.v2_channel_id, m.channel_type);
    const reason = drops.get(`${m.node_id}:${ch}`)?.get(m.message_seq);
    if (reason === undefined) {
      writer.writeLine(line);
      continue;
    }
    const key = aggregateKey.message(ch, m.message_seq).toString('base64');
    excludedOut.writeLine(
      `{"kind":"message","reason":${jsonString(reason)},"node_id":${m.node_id},"shard":${m.shard},"key":"${key}","record":${line}}`,
    );
    const tail = tails.get(ch);
    if (tail) tail.messages--;
    moved++;
  }
  rmSync(old);
  return { writer, moved };
}
