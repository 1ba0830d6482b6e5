import { MessageIdTable } from './message-ids.ts';

/** Where a carried message was read and what identifies its row. */
export interface CarriedRow {
  node_id: number;
  shard: number;
  ch: string;
  channel_id: string;
  channel_type: number;
  seq: number;
  timestamp: number;
}

/**
 * The message ids of the carried messages, each with its first row (the
 * place a second use names): a typed-array table for the ids, columns for
 * the rows (no object per message).
 */
export class CarriedIds {
  private readonly ids = new MessageIdTable();
  private readonly node: number[] = [];
  private readonly shard: number[] = [];
  private readonly ch: string[] = [];
  private readonly channel: string[] = [];
  private readonly type: number[] = [];
  private readonly seq: number[] = [];
  private readonly timestamp: number[] = [];

  /** Records the id of `row`; returns the row that already held it, if any. */
  register(messageId: string, row: CarriedRow): CarriedRow | undefined {
    const prior = this.ids.addOrGet(messageId, this.seq.length);
    if (prior >= 0) {
      return {
        node_id: this.node[prior]!,
        shard: this.shard[prior]!,
        ch: this.ch[prior]!,
        channel_id: this.channel[prior]!,
        channel_type: this.type[prior]!,
        seq: this.seq[prior]!,
        timestamp: this.timestamp[prior]!,
      };
    }
    this.node.push(row.node_id);
    this.shard.push(row.shard);
    this.ch.push(row.ch);
    this.channel.push(row.channel_id);
    this.type.push(row.channel_type);
    this.seq.push(row.seq);
    this.timestamp.push(row.timestamp);
    return undefined;
  }

  /** Whether a carried message of a channel other than `ch` holds `messageId`. */
  usedElsewhere(messageId: string, ch: string): boolean {
    const at = this.ids.get(messageId);
    return at >= 0 && this.ch[at] !== ch;
  }
}
