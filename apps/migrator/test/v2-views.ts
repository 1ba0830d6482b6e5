/**
 * What v2.2.5's own read paths show for a fixture, computed from its
 * `expected.json` (wkdb's read-back) with v2's rules, for comparing with what
 * a Parley server on the imported target shows.
 */

export interface V2SyncItem {
  channel_id: string;
  channel_type: number;
  last_msg_seq: number;
  unread: number;
}

const CMD = '____cmd';

/** A user's chat conversations (type 0) in v2's list order: newest update first, rows without one last. */
export function v2ChatOrder(user: any): any[] {
  const ns = (t: any) => (t ? BigInt(t.unix_nano) : undefined);
  const convs = user.conversations.filter((c: any) => c.type === 0);
  return convs.sort((a: any, b: any) => {
    const x = ns(a.updated_at);
    const y = ns(b.updated_at);
    if (x === undefined) return y === undefined ? 0 : 1;
    if (y === undefined) return -1;
    return x > y ? -1 : x < y ? 1 : 0;
  });
}

/**
 * v2's `POST /conversation/sync {uid, msg_count: 1}` (internal/api/conversation.go
 * `syncUserConversation`): the user's chat conversations (type 0) by update
 * time, newest `limit` of them, one per channel, command channels and chats
 * with the system uid left out, and only those with a message above their
 * delete position; person channels are named by the peer uid. Unread is the
 * tail minus the read position, lowered by the user's own last send, 0 when
 * the last message is the user's own.
 */
export function v2ConversationSync(exp: any, uid: string, limit = 1000): V2SyncItem[] {
  const user = exp.users.find((u: any) => u.uid === uid);
  if (!user) return [];
  const channels = new Map<string, any>(exp.message_channels.map((c: any) => [`${c.channel_type}:${c.channel_id}`, c]));
  const convs = v2ChatOrder(user);
  const seen = new Set<string>();
  const out: V2SyncItem[] = [];
  for (const c of convs.slice(0, limit)) {
    const k = `${c.channel_type}:${c.channel_id}`;
    if (seen.has(k)) continue;
    seen.add(k);
    if (c.channel_id.endsWith(CMD)) continue;
    const peer = c.channel_type === 1 ? (c.channel_id.split('@').find((x: string) => x !== uid) ?? uid) : c.channel_id;
    if (c.channel_type === 1 && peer === '____system') continue;
    const deleted = Number(c.deleted_at_msg_seq);
    const msgs = (channels.get(k)?.messages ?? []).filter((m: any) => Number(m.message_seq) > deleted);
    if (msgs.length === 0) continue;
    const last = msgs.at(-1);
    const lastSeq = Number(last.message_seq);
    const read = Number(c.readed_to_msg_seq);
    let unread = lastSeq > read ? lastSeq - read : 0;
    const own = (channels.get(k)?.messages ?? []).filter((m: any) => m.from_uid === uid).map((m: any) => Number(m.message_seq));
    const userLast = own.length > 0 ? Math.max(...own) : 0;
    if (userLast > read && lastSeq - userLast < unread && lastSeq >= read) unread = lastSeq - userLast;
    if (last.from_uid === uid) unread = 0;
    out.push({ channel_id: peer, channel_type: c.channel_type, last_msg_seq: lastSeq, unread });
  }
  return out;
}

/**
 * Whether a conversation v2 lists is one a v3 directory moves to `deletes`
 * instead (semantics §8, §13): a channel disbanded in v2, or a group the
 * user is no longer a subscriber of.
 */
export function v3Deletes(exp: any, uid: string): (item: { channel_id: string; channel_type: number }) => boolean {
  const channels = new Map<string, any>(exp.channels.map((c: any) => [`${c.channel_type}:${c.channel_id}`, c]));
  return (item) => {
    if (item.channel_type === 1) return false;
    const c = channels.get(`${item.channel_type}:${item.channel_id}`);
    return !c || c.info?.disband === true || !c.subscribers.some((s: any) => s.uid === uid);
  };
}
