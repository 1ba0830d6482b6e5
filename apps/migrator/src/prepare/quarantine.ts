import { Buffer } from 'node:buffer';
import type { Plan } from '@parley/shared';
import { CMD_SUFFIX } from '@parley/shared';
import type { Policy } from '../policy.ts';
import { channelHash, fnv1a64Hex, hex8, u64Dec } from '../v2/hash.ts';
import type { RawRow, RowReader } from './raw-row.ts';

/** The row table each quarantine reason binds, by its aggregate key's first four bytes. */
const TABLE_OF: Record<string, { prefix: string; what: string }> = {
  invalid_message_channel: { prefix: '01010100', what: 'a message row' },
  message_id_clash: { prefix: '01010100', what: 'a message row' },
  unresolved_allowlist_channel: { prefix: '08010100', what: 'an allowlist row' },
  inconsistent_cmd_conversation: { prefix: '09010100', what: 'a conversation row' },
};

/** Quarantine reasons that remove a message from its channel: they need `compact_sequences`. */
const MESSAGE_REASONS = new Set(['invalid_message_channel', 'message_id_clash']);

/** A `quarantine[]` entry bound to its row. */
export interface BoundEntry {
  index: number;
  node_id: number;
  shard: number;
  /** Base64 aggregate key, as the plan names it. */
  key: string;
  sha256: string;
  reason: string;
  row: RawRow;
  /** Set once the scan met the row. */
  hit: boolean;
}

const text = (b64: string | undefined) => Buffer.from(b64 ?? '', 'base64').toString('utf8');

/**
 * The plan's quarantine entries, each bound to exactly one physical row
 * (seed 001): a missing row, a changed hash, a duplicate entry or a reason
 * that does not fit the row stops the run. Rows are looked up by the scan
 * through `message`, `allow` and `conversation`.
 */
export class Quarantine {
  private readonly byKey = new Map<string, BoundEntry>();
  /** `node:shard` places that hold message / allowlist / conversation entries (rows elsewhere need no lookup). */
  private readonly places = { message: new Set<string>(), allow: new Set<string>(), conversation: new Set<string>() };
  readonly entries: BoundEntry[] = [];

  /** Binds every entry; returns the problems (the run stops on any). */
  static bind(
    plan: Plan,
    policy: Policy,
    shardCounts: Map<number, number>,
    reader: RowReader,
  ): { quarantine: Quarantine; problems: string[] } {
    const q = new Quarantine();
    const problems: string[] = [];
    for (const [i, e] of (plan.quarantine ?? []).entries()) {
      const at = `plan.quarantine[${i}]`;
      const shards = shardCounts.get(e.node_id);
      if (shards === undefined) {
        problems.push(`${at}.node_id: ${e.node_id} is not a source node of the plan`);
        continue;
      }
      if (e.shard >= shards) {
        problems.push(`${at}.shard: ${e.shard}, but source node ${e.node_id} has ${shards} shards`);
        continue;
      }
      if (MESSAGE_REASONS.has(e.reason) && !policy.compactSequences)
        problems.push(`${at}.reason: quarantining a message (${e.reason}) requires messages.compact_sequences`);
      if (e.reason === 'inconsistent_cmd_conversation' && !policy.excludeCmd)
        problems.push(`${at}.reason: inconsistent_cmd_conversation requires messages.exclude_cmd`);
      const key = Buffer.from(e.key, 'base64');
      const table = TABLE_OF[e.reason]!;
      if (key.length !== 20 || key.subarray(0, 4).toString('hex') !== table.prefix) {
        problems.push(`${at}.key: not the aggregate key of ${table.what} (reason ${e.reason})`);
        continue;
      }
      const id = `${e.node_id}:${e.shard}:${key.toString('hex')}`;
      if (q.byKey.has(id)) {
        problems.push(`${at}: duplicate entry (plan.quarantine[${q.byKey.get(id)!.index}] binds the same row)`);
        continue;
      }
      const row = reader.row(e.node_id, e.shard, key);
      if (!row) {
        problems.push(`${at}: binds to nothing: node ${e.node_id} shard ${e.shard} has no row under key ${e.key}`);
        continue;
      }
      if (row.sha256 !== e.sha256) {
        problems.push(`${at}.sha256: the row's SHA-256 is ${row.sha256} (it changed, or the entry names another row)`);
        continue;
      }
      const misfit = reasonMisfit(e.reason, key, row);
      if (misfit) {
        problems.push(`${at}.reason: ${e.reason} does not fit this row: ${misfit}`);
        continue;
      }
      const bound: BoundEntry = {
        index: i,
        node_id: e.node_id,
        shard: e.shard,
        key: e.key,
        sha256: e.sha256,
        reason: e.reason,
        row,
        hit: false,
      };
      q.byKey.set(id, bound);
      q.entries.push(bound);
      const kind =
        e.reason === 'unresolved_allowlist_channel' ? 'allow' : e.reason === 'inconsistent_cmd_conversation' ? 'conversation' : 'message';
      q.places[kind].add(`${e.node_id}:${e.shard}`);
    }
    return { quarantine: q, problems };
  }

  /** Whether any message entry names a row of this shard (the scan looks rows up only then). */
  hasMessages(node: number, shard: number): boolean {
    return this.places.message.has(`${node}:${shard}`);
  }

  message(node: number, shard: number, ch: string, seq: number): BoundEntry | undefined {
    if (!this.places.message.has(`${node}:${shard}`)) return undefined;
    return this.hit(`${node}:${shard}:01010100${ch}${seq.toString(16).padStart(16, '0')}`);
  }

  allow(node: number, shard: number, ch: string, uid: string): BoundEntry | undefined {
    if (!this.places.allow.has(`${node}:${shard}`)) return undefined;
    return this.hit(`${node}:${shard}:08010100${ch}${fnv1a64Hex(uid)}`);
  }

  conversation(node: number, shard: number, uid: string, id: string): BoundEntry | undefined {
    if (!this.places.conversation.has(`${node}:${shard}`)) return undefined;
    return this.hit(`${node}:${shard}:09010100${fnv1a64Hex(uid)}${BigInt(id).toString(16).padStart(16, '0')}`);
  }

  private hit(id: string): BoundEntry | undefined {
    const e = this.byKey.get(id);
    if (e) e.hit = true;
    return e;
  }

  /**
   * Checks that need the whole scan: every entry met its row among what is
   * carried; an allowlist row's channel is indeed unresolvable; a clashing
   * message id is indeed used by a carried message of another channel.
   */
  afterScan(resolvable: (ch: string) => boolean, idUsedElsewhere: (messageId: string, ch: string) => boolean): string[] {
    const problems: string[] = [];
    for (const e of this.entries) {
      const at = `plan.quarantine[${e.index}]`;
      const key = Buffer.from(e.key, 'base64');
      const ch = hex8(key, 4);
      if (!e.hit)
        problems.push(`${at}: binds to a row the migration does not carry (above its channel's last-seq, or in a table not read)`);
      else if (e.reason === 'unresolved_allowlist_channel' && resolvable(ch))
        problems.push(`${at}.reason: the allowlist row's channel hash ${ch} resolves to a known channel`);
      else if (e.reason === 'message_id_clash' && !idUsedElsewhere(u64Dec(Buffer.from(e.row.columns['0104'] ?? '', 'base64'), 0), ch)) {
        problems.push(`${at}.reason: the message's id is not used by a carried message of another channel`);
      }
    }
    return problems;
  }
}

/** Why a quarantine reason does not fit a row, judged from the row alone, or undefined. */
function reasonMisfit(reason: string, key: Buffer, row: RawRow): string | undefined {
  const c = row.columns;
  if (reason === 'invalid_message_channel') {
    const hash = channelHash(text(c['0108']), Buffer.from(c['0109'] ?? '', 'base64')[0] ?? 0);
    return hash === hex8(key, 4) ? 'its key hash is the hash of its ChannelId column' : undefined;
  }
  if (reason === 'message_id_clash') return c['0104'] === undefined ? 'it has no MessageId column' : undefined;
  if (reason === 'inconsistent_cmd_conversation') {
    const cmdType = (Buffer.from(c['0904'] ?? '', 'base64')[0] ?? 0) === 1;
    return cmdType === text(c['0902']).endsWith(CMD_SUFFIX) ? 'its Type and its channel id agree' : undefined;
  }
  return undefined;
}
