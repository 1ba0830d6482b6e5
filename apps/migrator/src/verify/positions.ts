import type { MessageRecord } from '../v2/records.ts';

/**
 * Verify's own account of the target sequence numbers: the archive's
 * retained v2 seqs per channel, sorted, and the seed's rule (with
 * `compact_sequences` a message's seq is its rank, a position the count of
 * retained messages at or before it; without it both stay).
 */
export class Positions {
  private readonly seqs = new Map<string, number[]>();

  private constructor(readonly compact: boolean) {}

  static fromMessages(messages: Iterable<Pick<MessageRecord, 'channel_id' | 'channel_type' | 'message_seq'>>, compact: boolean): Positions {
    const p = new Positions(compact);
    for (const m of messages) {
      const k = `${m.channel_type}\u0000${m.channel_id}`;
      let list = p.seqs.get(k);
      if (!list) p.seqs.set(k, (list = []));
      list.push(m.message_seq);
    }
    for (const list of p.seqs.values()) list.sort((a, b) => a - b);
    return p;
  }

  /** Retained messages at or before `pos`. */
  private atOrBefore(list: number[], pos: number): number {
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (list[mid]! <= pos) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  targetSeq(channelType: number, channelId: string, v2Seq: number): number {
    if (!this.compact) return v2Seq;
    return this.atOrBefore(this.seqs.get(`${channelType}\u0000${channelId}`) ?? [], v2Seq);
  }

  position(channelType: number, channelId: string, pos: number): number {
    if (!this.compact || pos <= 0) return pos;
    return this.atOrBefore(this.seqs.get(`${channelType}\u0000${channelId}`) ?? [], pos);
  }
}
