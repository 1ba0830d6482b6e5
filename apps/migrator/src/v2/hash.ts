/**
 * The hashes WuKongIM v2.2.5 puts in keys and uses for shard routing
 * (spec v2-storage §1.4, §2.3). 64-bit values are 16-digit lower-case hex
 * strings: cheap map keys, compared exactly as the key bytes.
 */

const utf8 = new TextEncoder();
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/**
 * The bytes a hash runs over: the string's UTF-8. ASCII text (nearly every
 * id) is read from its char codes without encoding; anything else is encoded.
 */
function utf8Bytes(text: string): string | Uint8Array {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return utf8.encode(text);
  return text;
}

/** Go `hash/fnv.New32` (FNV-1, not 1a) over the UTF-8 bytes: the string-shard hash. */
export function fnv1_32(text: string): number {
  const bytes = utf8Bytes(text);
  let h = 0x811c9dc5;
  if (typeof bytes === 'string') for (let i = 0; i < bytes.length; i++) h = (Math.imul(h, 0x01000193) ^ bytes.charCodeAt(i)) >>> 0;
  else for (const b of bytes) h = (Math.imul(h, 0x01000193) ^ b) >>> 0;
  return h >>> 0;
}

/** FNV-1a 64 (`HashWithString`) as 16 hex digits; four 16-bit limbs keep it in doubles. */
export function fnv1a64Hex(text: string): string {
  const bytes = utf8Bytes(text);
  const ascii = typeof bytes === 'string';
  let h0 = 0x2325;
  let h1 = 0x8422;
  let h2 = 0x9ce4;
  let h3 = 0xcbf2;
  for (let i = 0; i < bytes.length; i++) {
    h0 ^= ascii ? bytes.charCodeAt(i) : bytes[i]!;
    // multiply by the prime 0x100000001b3 = 2^40 + 0x1b3
    const n0 = h0 * 0x1b3;
    const n1 = h1 * 0x1b3 + Math.floor(n0 / 65536);
    const n2 = h2 * 0x1b3 + Math.floor(n1 / 65536) + ((h0 << 8) & 0xffff);
    const n3 = h3 * 0x1b3 + Math.floor(n2 / 65536) + ((h1 << 8) & 0xffff) + (h0 >>> 8);
    h0 = n0 & 0xffff;
    h1 = n1 & 0xffff;
    h2 = n2 & 0xffff;
    h3 = n3 & 0xffff;
  }
  return (
    HEX[h3 >> 8]! + HEX[h3 & 0xff]! + HEX[h2 >> 8]! + HEX[h2 & 0xff]! + HEX[h1 >> 8]! + HEX[h1 & 0xff]! + HEX[h0 >> 8]! + HEX[h0 & 0xff]!
  );
}

/** `ChannelToNum(id, type)`: FNV-1a 64 of `id-type`, the channel hash in keys. */
export function channelHash(channelId: string, channelType: number): string {
  return fnv1a64Hex(`${channelId}-${channelType}`);
}

/** Channel shard of a channel hash for `shards` shards: the u64 modulo, digit by digit (exact for any shard count below 2^48). */
export function channelShard(hashHex: string, shards: number): number {
  if (shards <= 1) return 0;
  let r = 0;
  for (let i = 0; i < hashHex.length; i++) {
    const c = hashHex.charCodeAt(i);
    r = (r * 16 + (c >= 97 ? c - 87 : c >= 65 ? c - 55 : c - 48)) % shards;
  }
  return r;
}

/** String shard of a uid (or other string) for `shards` shards. */
export function stringShard(text: string, shards: number): number {
  return shards <= 1 ? 0 : fnv1_32(text) % shards;
}

/** 8 bytes at `offset` as 16 hex digits. */
export function hex8(bytes: Uint8Array, offset: number): string {
  let s = '';
  for (let i = offset; i < offset + 8; i++) s += HEX[bytes[i]!]!;
  return s;
}

/** A big-endian u64 at `offset` as a decimal string. */
export function u64Dec(bytes: Uint8Array, offset: number): string {
  const hi = ((bytes[offset]! << 24) | (bytes[offset + 1]! << 16) | (bytes[offset + 2]! << 8) | bytes[offset + 3]!) >>> 0;
  const lo = ((bytes[offset + 4]! << 24) | (bytes[offset + 5]! << 16) | (bytes[offset + 6]! << 8) | bytes[offset + 7]!) >>> 0;
  if (hi < 0x200000) return String(hi * 4294967296 + lo);
  return ((BigInt(hi) << 32n) | BigInt(lo)).toString();
}

/** A big-endian u64 at `offset` as a JS number (exact below 2^53; callers use it for seqs and times in ms). */
export function u64Num(bytes: Uint8Array, offset: number): number {
  const hi = ((bytes[offset]! << 24) | (bytes[offset + 1]! << 16) | (bytes[offset + 2]! << 8) | bytes[offset + 3]!) >>> 0;
  const lo = ((bytes[offset + 4]! << 24) | (bytes[offset + 5]! << 16) | (bytes[offset + 6]! << 8) | bytes[offset + 7]!) >>> 0;
  return hi * 4294967296 + lo;
}

/** A big-endian u32 at `offset`. */
export function u32(bytes: Uint8Array, offset: number): number {
  return ((bytes[offset]! << 24) | (bytes[offset + 1]! << 16) | (bytes[offset + 2]! << 8) | bytes[offset + 3]!) >>> 0;
}

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** CRC-32/IEEE (Go `crc32.ChecksumIEEE`) over the UTF-8 bytes. */
export function crc32(text: string): number {
  let c = 0xffffffff;
  for (const b of utf8.encode(text)) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** The v2 cluster slot of a key (`wkutil.GetSlotNum`): CRC-32/IEEE mod the slot count. Keys: a uid, or a channel id without its type. */
export function slotOf(key: string, slotCount: number): number {
  return crc32(key) % slotCount;
}
