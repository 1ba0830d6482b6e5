/**
 * WAL batch decoding: `seqNum u64 LE | count u32 LE | entries`. Each non-LOGDATA
 * entry takes the next sequence number. Range-key entries are skipped (they never
 * affect point keys); INGESTSST batches are rejected (WuKongIM never ingests).
 */
import { Decoder } from './decoder.ts';
import { PebbleUnsupportedError } from './errors.ts';
import { Kind, trailerSeq } from './internal-key.ts';
import { readUvarint, readU32LE, type VarintCursor } from './varint.ts';

/**
 * Point operations decoded from WAL batches, as parallel arrays (no object or
 * view per operation): entry `i` has key `arena[keyOff[i], keyOff[i] + keyLen[i])`,
 * value `arena[valOff[i], valOff[i] + valLen[i])` (empty for deletions), a
 * sequence number and a kind, in the order the batches held them.
 */
export class PointTable {
  count = 0;
  keyOff: Int32Array;
  keyLen: Int32Array;
  valOff: Int32Array;
  valLen: Int32Array;
  seq: Float64Array;
  kind: Uint8Array;

  /** @param arena the bytes every key and value is a range of. */
  constructor(
    readonly arena: Uint8Array,
    capacity = 256,
  ) {
    this.keyOff = new Int32Array(capacity);
    this.keyLen = new Int32Array(capacity);
    this.valOff = new Int32Array(capacity);
    this.valLen = new Int32Array(capacity);
    this.seq = new Float64Array(capacity);
    this.kind = new Uint8Array(capacity);
  }

  push(keyOff: number, keyLen: number, valOff: number, valLen: number, seq: number, kind: number): void {
    const i = this.count;
    if (i === this.keyOff.length) this.grow();
    this.keyOff[i] = keyOff;
    this.keyLen[i] = keyLen;
    this.valOff[i] = valOff;
    this.valLen[i] = valLen;
    this.seq[i] = seq;
    this.kind[i] = kind;
    this.count = i + 1;
  }

  /** View of entry `i`'s key. */
  key(i: number): Uint8Array {
    return this.arena.subarray(this.keyOff[i]!, this.keyOff[i]! + this.keyLen[i]!);
  }

  /** View of entry `i`'s value. */
  value(i: number): Uint8Array {
    return this.arena.subarray(this.valOff[i]!, this.valOff[i]! + this.valLen[i]!);
  }

  private grow(): void {
    const cap = Math.max(256, this.keyOff.length * 2);
    const grown = <T extends Int32Array | Float64Array | Uint8Array>(a: T, make: (n: number) => T): T => {
      const b = make(cap);
      b.set(a);
      return b;
    };
    this.keyOff = grown(this.keyOff, (n) => new Int32Array(n));
    this.keyLen = grown(this.keyLen, (n) => new Int32Array(n));
    this.valOff = grown(this.valOff, (n) => new Int32Array(n));
    this.valLen = grown(this.valLen, (n) => new Int32Array(n));
    this.seq = grown(this.seq, (n) => new Float64Array(n));
    this.kind = grown(this.kind, (n) => new Uint8Array(n));
  }
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
 * Decodes one batch record of `file` (at `offset`), the bytes `points.arena[start,
 * end)`, appending point entries to `points` and range deletions to `tombstones`.
 * Returns the batch's sequence number and entry count.
 */
export function decodeBatch(
  start: number,
  end: number,
  file: string,
  offset: number,
  points: PointTable,
  tombstones: Tombstone[],
  counts: KindCounts,
): { seq: number; count: number } {
  const data = points.arena;
  const fail = (pos: number, detail: string): Error =>
    new Decoder(data, pos, end, file, undefined, `WAL batch at offset ${offset}`).fail(detail);
  if (end - start < 12) throw fail(start, `batch header needs 12 bytes, record has ${end - start}`);
  const seq = trailerSeq(data, start) * 256 + data[start]!;
  if (seq > Number.MAX_SAFE_INTEGER) throw fail(start, 'batch sequence number above 2^53 is not supported');
  const count = readU32LE(data, start + 8);
  const kindCounts = new Uint32Array(23);
  let pos = start + 12;
  let i = 0;
  // Inline parsing (one byte kind, then uvarint-length-prefixed key and value):
  // this runs once per WAL operation at open.
  while (pos < end) {
    const kind = data[pos]!;
    if (kind >= 23 || VALID[kind] !== 1) throw fail(pos, `invalid entry kind ${kind} in WAL batch`);
    if (kind === INGESTSST)
      throw new PebbleUnsupportedError(`${file}: WAL batch at offset ${offset} ingests sstables (kind 22); not supported`);
    pos++;
    let klen = pos < end ? data[pos]! : 256;
    if (klen < 0x80) pos++;
    else {
      if (!readUvarint(data, pos, end, cursor)) throw fail(pos, 'bad or truncated varint (entry key)');
      klen = cursor.value;
      pos = cursor.pos;
    }
    if (pos + klen > end) throw fail(pos, `length ${klen} runs past the end (entry key)`);
    const keyOff = pos;
    pos += klen;
    let valOff = pos;
    let vlen = 0;
    if (HAS_VALUE[kind] === 1) {
      vlen = pos < end ? data[pos]! : 256;
      if (vlen < 0x80) pos++;
      else {
        if (!readUvarint(data, pos, end, cursor)) throw fail(pos, 'bad or truncated varint (entry value)');
        vlen = cursor.value;
        pos = cursor.pos;
      }
      if (pos + vlen > end) throw fail(pos, `length ${vlen} runs past the end (entry value)`);
      valOff = pos;
      pos += vlen;
    }
    kindCounts[kind]!++;
    if (kind === LOGDATA) continue;
    const s = seq + i++;
    if (kind === RANGEDEL)
      tombstones.push({ start: data.subarray(keyOff, keyOff + klen), end: data.subarray(valOff, valOff + vlen), seq: s });
    else if (kind < RANGEKEYDEL) points.push(keyOff, klen, valOff, vlen, s, kind);
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

const KIND_LABEL: Record<number, string> = {
  0: 'DEL',
  1: 'SET',
  2: 'MERGE',
  3: 'LOGDATA',
  7: 'SINGLEDEL',
  15: 'RANGEDEL',
  19: 'RANGEKEYDEL',
  20: 'RANGEKEYUNSET',
  21: 'RANGEKEYSET',
};
