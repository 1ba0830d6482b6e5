/**
 * WAL batch decoding: `seqNum u64 LE | count u32 LE | entries`. Each non-LOGDATA
 * entry takes the next sequence number. Range-key entries are skipped (they never
 * affect point keys); INGESTSST batches are rejected (WuKongIM never ingests).
 */
import { Decoder } from './decoder.ts';
import { PebbleUnsupportedError } from './errors.ts';
import { Kind, trailerSeq } from './internal-key.ts';

/** A point operation from a WAL batch. `value` is empty for deletions. */
export interface BatchEntry {
  key: Uint8Array;
  seq: number;
  kind: number;
  value: Uint8Array;
}

/** A range deletion `[start, end)` at `seq`. */
export interface Tombstone {
  start: Uint8Array;
  end: Uint8Array;
  seq: number;
}

/** Per-kind operation counts, filled while decoding (kind name → count). */
export type KindCounts = Record<string, number>;

const { INGESTSST, LOGDATA, RANGEDEL, RANGEKEYDEL } = Kind;
const HAS_VALUE = new Set<number>([Kind.SET, Kind.MERGE, Kind.RANGEDEL, Kind.RANGEKEYDEL, Kind.RANGEKEYUNSET, Kind.RANGEKEYSET]);
const VALID = new Set<number>([0, 1, 2, 3, 7, 15, 19, 20, 21, 22]);

/**
 * Decodes one batch record of `file` (at `offset`), appending point entries to
 * `points` and range deletions to `tombstones`. Returns the batch's sequence
 * number and entry count.
 */
export function decodeBatch(
  data: Uint8Array,
  file: string,
  offset: number,
  points: BatchEntry[],
  tombstones: Tombstone[],
  counts: KindCounts,
): { seq: number; count: number } {
  const d = new Decoder(data, 0, data.length, file, undefined, `WAL batch at offset ${offset}`);
  if (data.length < 12) throw d.fail(`batch header needs 12 bytes, record has ${data.length}`);
  const seq = trailerSeq(data, 0) * 256 + data[0]!;
  if (seq > Number.MAX_SAFE_INTEGER) throw d.fail('batch sequence number above 2^53 is not supported');
  d.pos = 8;
  const count = d.u32('batch count');
  let i = 0;
  while (!d.done) {
    const kind = d.u8('entry kind');
    if (!VALID.has(kind)) throw d.fail(`invalid entry kind ${kind} in WAL batch`);
    if (kind === INGESTSST) throw new PebbleUnsupportedError(`${file}: WAL batch at offset ${offset} ingests sstables (kind 22); not supported`);
    const key = d.lengthPrefixed('entry key');
    const value = HAS_VALUE.has(kind) ? d.lengthPrefixed('entry value') : EMPTY;
    const name = KIND_LABEL[kind] ?? String(kind);
    counts[name] = (counts[name] ?? 0) + 1;
    if (kind === LOGDATA) continue;
    const s = seq + i++;
    if (kind === RANGEDEL) tombstones.push({ start: key, end: value, seq: s });
    else if (kind < RANGEKEYDEL) points.push({ key, seq: s, kind, value });
  }
  if (i !== count) throw d.fail(`batch header says ${count} entries, found ${i}`);
  return { seq, count };
}

const EMPTY = new Uint8Array(0);
const KIND_LABEL: Record<number, string> = {
  0: 'DEL', 1: 'SET', 2: 'MERGE', 3: 'LOGDATA', 7: 'SINGLEDEL', 15: 'RANGEDEL', 19: 'RANGEKEYDEL', 20: 'RANGEKEYUNSET', 21: 'RANGEKEYSET',
};
