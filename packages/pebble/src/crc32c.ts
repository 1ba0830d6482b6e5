/**
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) with Pebble's masking.
 * Slicing-by-8 tables keep the per-byte cost low: every block of every table is
 * checksummed on a scan, so this is on the hot path.
 */

const POLY = 0x82f63b78;
const TABLES: Uint32Array[] = buildTables();

function buildTables(): Uint32Array[] {
  const tables: Uint32Array[] = [];
  const t0 = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1;
    t0[i] = c >>> 0;
  }
  tables.push(t0);
  for (let t = 1; t < 8; t++) {
    const prev = tables[t - 1] as Uint32Array;
    const cur = new Uint32Array(256);
    for (let i = 0; i < 256; i++) {
      const p = prev[i] as number;
      cur[i] = ((p >>> 8) ^ (t0[p & 0xff] as number)) >>> 0;
    }
    tables.push(cur);
  }
  return tables;
}

const [T0, T1, T2, T3, T4, T5, T6, T7] = TABLES as [
  Uint32Array,
  Uint32Array,
  Uint32Array,
  Uint32Array,
  Uint32Array,
  Uint32Array,
  Uint32Array,
  Uint32Array,
];

/** Plain CRC-32C of `data[start, end)` (init and final xor 0xFFFFFFFF), as an unsigned 32-bit number. */
export function crc32c(data: Uint8Array, start = 0, end = data.length): number {
  let c = 0xffffffff;
  let i = start;
  const end8 = end - ((end - start) & 7);
  while (i < end8) {
    const a = c ^ (data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24));
    c =
      T7[a & 0xff]! ^
      T6[(a >>> 8) & 0xff]! ^
      T5[(a >>> 16) & 0xff]! ^
      T4[a >>> 24]! ^
      T3[data[i + 4]!]! ^
      T2[data[i + 5]!]! ^
      T1[data[i + 6]!]! ^
      T0[data[i + 7]!]!;
    i += 8;
  }
  while (i < end) c = T0[(c ^ data[i++]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** Pebble/LevelDB masking of a CRC so that CRCs of data containing CRCs stay well distributed. */
export function maskCrc(crc: number): number {
  return ((((crc >>> 15) | (crc << 17)) >>> 0) + 0xa282ead8) >>> 0;
}

/** Masked CRC-32C of `data[start, end)`, the value stored in log chunks and block trailers. */
export function maskedCrc32c(data: Uint8Array, start = 0, end = data.length): number {
  return maskCrc(crc32c(data, start, end));
}
