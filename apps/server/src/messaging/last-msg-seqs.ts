import { ChannelType, normalizePersonChannel } from '@parley/shared';

/** Largest value of a u64 decimal, the bound WuKongIM parses `last_msg_seq` with. */
const U64_MAX = 2n ** 64n - 1n;

/** Key of a conversation in a parsed `last_msg_seqs`: `<channel_type>:<canonical channel id>`. */
export const knownKey = (channelId: string, channelType: number): string => `${channelType}:${channelId}`;

/**
 * Parses the legacy `last_msg_seqs` of `/conversation/sync`:
 * `channel_id:channel_type:last_msg_seq` entries joined by `|`, naming the
 * conversations a client already holds and the newest seq it has of each.
 * Person ids are peer uids (or a canonical `a@b`) and are normalized for
 * `uid`. Blank text means "nothing known". Returns undefined when any entry
 * is malformed (the route answers 400 `invalid last_msg_seqs`); seqs beyond
 * 2^53 are clamped, which still reads as "has everything".
 */
export function parseLastMsgSeqs(uid: string, raw: string): Map<string, number> | undefined {
  const known = new Map<string, number>();
  if (raw.trim() === '') return known;
  for (const entry of raw.split('|')) {
    const parts = entry.split(':');
    if (parts.length !== 3 || parts[0] === '') return undefined;
    const [id, typeText, seqText] = parts as [string, string, string];
    if (!/^\d{1,3}$/.test(typeText) || !/^\d{1,20}$/.test(seqText)) return undefined;
    const type = Number(typeText);
    const seq = BigInt(seqText);
    if (type > 255 || seq > U64_MAX) return undefined;
    const channelId = type === ChannelType.Person ? normalizePersonChannel(uid, id) : id;
    if (channelId === undefined) return undefined;
    known.set(knownKey(channelId, type), seq > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(seq));
  }
  return known;
}
