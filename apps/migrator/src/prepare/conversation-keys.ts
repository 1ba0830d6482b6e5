/** A conversation row at a (uid, v3 channel id) place, with the next one under another channel type. */
interface Place {
  type: number;
  v2_id: string;
  next?: Place;
}

/** Conversations by (uid, channel type, v3 channel id): maps keyed by the strings themselves, not by one joined string per row. */
export class ConversationKeys {
  private readonly byUid = new Map<string, Map<string, Place>>();

  /** The v2 id of the conversation already at this place, or undefined after recording `v2_id` there. */
  addOrGet(uid: string, type: number, channelId: string, v2_id: string): string | undefined {
    let byChannel = this.byUid.get(uid);
    if (!byChannel) this.byUid.set(uid, (byChannel = new Map()));
    const first = byChannel.get(channelId);
    if (!first) {
      byChannel.set(channelId, { type, v2_id });
      return undefined;
    }
    // one channel id under several channel types: a short chain
    let at = first;
    for (;;) {
      if (at.type === type) return at.v2_id;
      if (at.next === undefined) break;
      at = at.next;
    }
    at.next = { type, v2_id };
    return undefined;
  }
}
