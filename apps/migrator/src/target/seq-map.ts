/**
 * The v2 → target sequence rule of one import (seed 001, `compact_sequences`):
 * without compaction every seq and position is kept; with it the retained
 * messages of a channel are numbered 1..N in original order, and a read or
 * delete position maps to the count of retained messages at or before it (a
 * fully excluded channel's tail is 0).
 */
export class SeqMap {
  /** Retained v2 seqs per channel key, ascending. */
  private readonly seqs = new Map<string, number[]>();

  constructor(readonly compact: boolean) {}

  /** Records the next retained message of a channel (ascending v2 seq); returns its target seq. */
  add(channel: string, v2Seq: number): number {
    let list = this.seqs.get(channel);
    if (!list) this.seqs.set(channel, (list = []));
    const prev = list.at(-1);
    if (prev !== undefined && prev >= v2Seq)
      throw new Error(`messages of ${channel.replace('\u0000', ' ')} are not in ascending seq order (${v2Seq} after ${prev})`);
    list.push(v2Seq);
    return this.compact ? list.length : v2Seq;
  }

  /** The target value of a v2 read/delete position (or tail) of a channel. */
  position(channel: string, pos: number): number {
    if (!this.compact || pos <= 0) return pos;
    const list = this.seqs.get(channel);
    if (!list) return 0;
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid]! <= pos) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Retained messages of a channel. */
  count(channel: string): number {
    return this.seqs.get(channel)?.length ?? 0;
  }
}

/** The key of a channel in maps: type and Parley channel id. */
export const channelKey = (channelId: string, channelType: number) => `${channelType}\u0000${channelId}`;
