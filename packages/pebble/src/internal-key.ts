/**
 * Internal keys: `userKey | trailer u64 LE`, trailer = (seqNum << 8) | kind.
 * Sequence numbers are JS numbers; the 2^56-1 sentinel (exclusive bounds) is
 * recognised by {@link isSentinelSeq} and real sequence numbers above 2^53 are rejected.
 */
import { Buffer } from 'node:buffer';
import { readU32LE } from './varint.ts';

/** Key kinds (`InternalKeyKind`) of Pebble v1.0.0. */
export const Kind = {
  DEL: 0,
  SET: 1,
  MERGE: 2,
  LOGDATA: 3,
  SINGLEDEL: 7,
  RANGEDEL: 15,
  SEPARATOR: 17,
  SETWITHDEL: 18,
  RANGEKEYDEL: 19,
  RANGEKEYUNSET: 20,
  RANGEKEYSET: 21,
  INGESTSST: 22,
  INVALID: 255,
} as const;

/** Human-readable kind names, for errors and statistics. */
export const KIND_NAMES: Readonly<Record<number, string>> = {
  0: 'DEL',
  1: 'SET',
  2: 'MERGE',
  3: 'LOGDATA',
  7: 'SINGLEDEL',
  15: 'RANGEDEL',
  17: 'SEPARATOR',
  18: 'SETWITHDEL',
  19: 'RANGEKEYDEL',
  20: 'RANGEKEYUNSET',
  21: 'RANGEKEYSET',
  22: 'INGESTSST',
  255: 'INVALID',
};

/** Largest sequence number (2^56 - 1) as stored; as a JS number it rounds to 2^56. */
export const SENTINEL_SEQ = 2 ** 56 - 1;

/** True for the 2^56-1 sentinel used by exclusive range-deletion/range-key bounds. */
export function isSentinelSeq(seq: number): boolean {
  return seq > Number.MAX_SAFE_INTEGER;
}

/** A decoded internal key. `userKey` is a view into the source buffer. */
export interface InternalKey {
  userKey: Uint8Array;
  seq: number;
  kind: number;
}

/** Sequence number from the 8 trailer bytes at `buf[pos]` (exact below 2^53). */
export function trailerSeq(buf: Uint8Array, pos: number): number {
  const lo = readU32LE(buf, pos);
  const hi = readU32LE(buf, pos + 4);
  return hi * 0x1000000 + (lo >>> 8);
}

/** Decodes an encoded internal key; returns undefined when shorter than 8 bytes. */
export function decodeInternalKey(encoded: Uint8Array): InternalKey | undefined {
  if (encoded.length < 8) return undefined;
  const n = encoded.length - 8;
  return { userKey: encoded.subarray(0, n), seq: trailerSeq(encoded, n), kind: encoded[n]! };
}

/**
 * Bytewise comparison of two byte strings (the only comparer this reader
 * supports): negative, zero or positive. A plain loop beats `Buffer.compare`
 * for the short keys of a scan, whose native-call overhead dominates.
 */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = a.length < b.length ? a.length : b.length;
  if (n > 128) return Buffer.compare(a, b);
  for (let i = 0; i < n; i++) {
    const d = a[i]! - b[i]!;
    if (d !== 0) return d;
  }
  return a.length - b.length;
}

/**
 * {@link compareBytes} for two keys already known to share their first `from`
 * bytes (e.g. through a block's shared-prefix encoding), so only the rest is compared.
 */
export function compareFrom(a: Uint8Array, b: Uint8Array, from: number): number {
  const n = a.length < b.length ? a.length : b.length;
  for (let i = from < n ? from : n; i < n; i++) {
    const d = a[i]! - b[i]!;
    if (d !== 0) return d;
  }
  return a.length - b.length;
}

/**
 * True when `x[xo, xo + len)` equals `y[yo, yo + len)`. Compares from the end:
 * neighbouring keys share long prefixes, so they differ there first.
 */
export function equalAt(x: Uint8Array, xo: number, y: Uint8Array, yo: number, len: number): boolean {
  for (let i = len - 1; i >= 0; i--) if (x[xo + i] !== y[yo + i]) return false;
  return true;
}

/** True when `x[xo, xo + len)` sorts before `key` bytewise. */
export function rangeBefore(x: Uint8Array, xo: number, len: number, key: Uint8Array): boolean {
  const m = len < key.length ? len : key.length;
  for (let i = 0; i < m; i++) {
    const d = x[xo + i]! - key[i]!;
    if (d !== 0) return d < 0;
  }
  return len < key.length;
}

/** Formats `key#seq,KIND` for messages (printable ASCII as text, otherwise hex). */
export function formatKey(k: InternalKey): string {
  const seq = isSentinelSeq(k.seq) ? 'inf' : String(k.seq);
  return `${formatUserKey(k.userKey)}#${seq},${KIND_NAMES[k.kind] ?? `kind${k.kind}`}`;
}

/** Printable rendering of a user key. */
export function formatUserKey(key: Uint8Array): string {
  const printable = key.every((b) => b >= 0x20 && b < 0x7f);
  return printable ? Buffer.from(key).toString('latin1') : `0x${Buffer.from(key).toString('hex')}`;
}
