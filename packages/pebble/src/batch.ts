/**
 * WAL batch decoding: `seqNum u64 LE | count u32 LE | entries`. Each non-LOGDATA
 * entry takes the next sequence number. Range-key entries are skipped (they never
 * affect point keys); INGESTSST batches are rejected (WuKongIM never ingests).
 */
import { Decoder } from './decoder.ts';
import { PebbleUnsupportedError } from './errors.ts';
import { Kind, trailerSeq } from './internal-key.ts';
import { readUvarint, readU32LE, type VarintCursor } from './varint.ts';

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
const HAS_VALUE = new Uint8Array(256);
for (const k of [Kind.SET, Kind.MERGE, Kind.RANGEDEL, Kind.RANGEKEYDEL, Kind.RANGEKEYUNSET, Kind.RANGEKEYSET]) HAS_VALUE[k] = 1;
const VALID = new Uint8Array(256);
for (const k of [0, 1, 2, 3, 7, 15, 19, 20, 21, 22]) VALID[k] = 1;
const cursor: VarintCursor = { value: 0, pos: 0 };

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
  const fail = (pos: number, detail: string): Error => new Decoder(data, pos, data.length, file, undefined, `WAL batch at offset ${offset}`).fail(detail);
  if (data.length < 12) throw fail(0, `batch header needs 12 bytes, record has ${data.length}`);
  const seq = trailerSeq(data, 0) * 256 + data[0]!;
  if (seq > Number.MAX_SAFE_INTEGER) throw fail(0, 'batch sequence number above 2^53 is not supported');
  const count = readU32LE(data, 8);
  const end = data.length;
  const kindCounts = new Uint32Array(23);
  let pos = 12;
  let i = 0;
  // Inline parsing (one byte kind, then uvarint-length-prefixed key and value):
  // this runs once per WAL operation at open.
  while (pos < end) {
    const kind = data[pos]!;
    if (kind >= 23 || VALID[kind] !== 1) throw fail(pos, `invalid entry kind ${kind} in WAL batch`);
    if (kind === INGESTSST) throw new PebbleUnsupportedError(`${file}: WAL batch at offset ${offset} ingests sstables (kind 22); not supported`);
    pos++;
    let klen = pos < end ? data[pos]! : 256;
    if (klen < 0x80) pos++;
    else {
      if (!readUvarint(data, pos, end, cursor)) throw fail(pos, 'bad or truncated varint (entry key)');
      klen = cursor.value;
      pos = cursor.pos;
    }
    if (pos + klen > end) throw fail(pos, `length ${klen} runs past the end (entry key)`);
    const key = data.subarray(pos, pos + klen);
    pos += klen;
    let value: Uint8Array = EMPTY;
    if (HAS_VALUE[kind] === 1) {
      let vlen = pos < end ? data[pos]! : 256;
      if (vlen < 0x80) pos++;
      else {
        if (!readUvarint(data, pos, end, cursor)) throw fail(pos, 'bad or truncated varint (entry value)');
        vlen = cursor.value;
        pos = cursor.pos;
      }
      if (pos + vlen > end) throw fail(pos, `length ${vlen} runs past the end (entry value)`);
      value = data.subarray(pos, pos + vlen);
      pos += vlen;
    }
    kindCounts[kind]!++;
    if (kind === LOGDATA) continue;
    const s = seq + i++;
    if (kind === RANGEDEL) tombstones.push({ start: key, end: value, seq: s });
    else if (kind < RANGEKEYDEL) points.push({ key, seq: s, kind, value });
  }
  if (i !== count) throw fail(pos, `batch header says ${count} entries, found ${i}`);
  for (let k = 0; k < kindCounts.length; k++) {
    const c = kindCounts[k]!;
    if (c === 0) continue;
    const name = KIND_LABEL[k] ?? String(k);
    counts[name] = (counts[name] ?? 0) + c;
  }
  return { seq, count };
}

const EMPTY = new Uint8Array(0);
const KIND_LABEL: Record<number, string> = {
  0: 'DEL', 1: 'SET', 2: 'MERGE', 3: 'LOGDATA', 7: 'SINGLEDEL', 15: 'RANGEDEL', 19: 'RANGEKEYDEL', 20: 'RANGEKEYUNSET', 21: 'RANGEKEYSET',
};
