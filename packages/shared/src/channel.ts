/** Channel types (uint8) as the WuKongIM wire uses them. */
export const ChannelType = {
  Person: 1,
  Group: 2,
  CustomerService: 3,
  Community: 4,
  CommunityTopic: 5,
  Info: 6,
  Data: 7,
  Temp: 8,
  Live: 9,
  Visitors: 10,
  Agent: 11,
  AgentGroup: 12,
} as const;

/** Device classes. A stored token and a CONNECT must use the same value. */
export const DeviceFlag = { App: 0, Web: 1, Pc: 2 } as const;

/** Device levels: a master login replaces the other devices of its class, a slave co-exists. */
export const DeviceLevel = { Slave: 0, Master: 1 } as const;

/** The built-in system uid: bypasses send checks, can never hold a token. */
export const SYSTEM_UID = '____system';

/** Suffix of a channel's command (SyncOnce) log. */
export const CMD_SUFFIX = '____cmd';

const crcTable = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

const utf8 = new TextEncoder();

const crcByte = (crc: number, byte: number): number => crcTable[(crc ^ byte) & 0xff]! ^ (crc >>> 8);

/**
 * CRC-32 (IEEE) of a string's UTF-8 bytes, unsigned. The bytes are taken from
 * the UTF-16 code units as they go (a lone surrogate as U+FFFD, as
 * `TextEncoder` writes it), with no encoded copy: it runs twice per 1:1 send.
 */
export function crc32(text: string): number {
  let crc = 0xffffffff;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    let c = text.charCodeAt(i);
    if (c < 0x80) {
      crc = crcByte(crc, c);
      continue;
    }
    if (c < 0x800) {
      crc = crcByte(crcByte(crc, 0xc0 | (c >> 6)), 0x80 | (c & 0x3f));
      continue;
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      const next = i + 1 < n ? text.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        const cp = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
        i++;
        crc = crcByte(crc, 0xf0 | (cp >> 18));
        crc = crcByte(crc, 0x80 | ((cp >> 12) & 0x3f));
        crc = crcByte(crc, 0x80 | ((cp >> 6) & 0x3f));
        crc = crcByte(crc, 0x80 | (cp & 0x3f));
        continue;
      }
      c = 0xfffd;
    }
    crc = crcByte(crc, 0xe0 | (c >> 12));
    crc = crcByte(crc, 0x80 | ((c >> 6) & 0x3f));
    crc = crcByte(crc, 0x80 | (c & 0x3f));
  }
  return (crc ^ 0xffffffff) >>> 0;
}

function byteCompare(a: string, b: string): number {
  const x = utf8.encode(a);
  const y = utf8.encode(b);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
}

/**
 * The canonical, symmetric id of the person channel between `a` and `b`:
 * the uid with the larger CRC-32 goes first (byte order breaks a tie).
 */
export function personChannelId(a: string, b: string): string {
  const ha = crc32(a);
  const hb = crc32(b);
  if (ha > hb || (ha === hb && byteCompare(a, b) > 0)) return `${a}@${b}`;
  return `${b}@${a}`;
}

/**
 * Normalizes a caller-supplied person channel id for user `uid`: a bare peer
 * uid or a two-part `x@y` naming `uid` becomes the canonical id. Returns
 * undefined for anything else (an invalid person channel).
 */
export function normalizePersonChannel(uid: string, channelId: string): string | undefined {
  const at = channelId.indexOf('@');
  if (at < 0) return channelId === '' ? undefined : personChannelId(uid, channelId);
  if (channelId.indexOf('@', at + 1) >= 0) return undefined;
  const left = channelId.slice(0, at);
  const right = channelId.slice(at + 1);
  if (left === '' || right === '') return undefined;
  if (left === uid) return personChannelId(uid, right);
  if (right === uid) return personChannelId(uid, left);
  return undefined;
}

/**
 * The peer of `uid` in a canonical person channel id, as shown to that user.
 * Returns the id unchanged when `uid` is not one of its two parts.
 */
export function personPeer(uid: string, canonicalId: string): string {
  const at = canonicalId.indexOf('@');
  if (at < 0) return canonicalId;
  const left = canonicalId.slice(0, at);
  const right = canonicalId.slice(at + 1);
  if (left === uid) return right;
  if (right === uid) return left;
  return canonicalId;
}

/** The two participants of a canonical person channel id. */
export function personParticipants(canonicalId: string): [string, string] | undefined {
  const at = canonicalId.indexOf('@');
  if (at <= 0 || at === canonicalId.length - 1) return undefined;
  return [canonicalId.slice(0, at), canonicalId.slice(at + 1)];
}
