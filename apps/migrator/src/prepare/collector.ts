import { Buffer } from 'node:buffer';
import type { JsonlWriter } from '../archive/jsonl.ts';
import { CMD_SUFFIX } from '@parley/shared';
import { messageHead, writeArchivedLine, writeMessageTail } from '../archive/record-json.ts';
import { writeExcludedMessage } from './excluded-line.ts';
import type { Policy } from '../policy.ts';
import type { ArchivedRecord } from '../v2/records.ts';
import { channelHash, channelShard, stringShard } from '../v2/hash.ts';
import type { CheckedMessage, RawChannelInfo, RawConversation, RawDevice, RawMember, RawMessage, RawUser } from '../v2/scan-shard.ts';
import type { ReplaySink } from '../v2/shard-events.ts';
import { v3ChannelId } from './channel-id.ts';
import { ClientMsgNos } from './client-msg-nos.ts';
import type { DupEdge } from './dedupe.ts';
import { Findings } from './findings.ts';
import { CarriedIds } from './carried-ids.ts';
import type { BoundEntry, Quarantine } from './quarantine.ts';
import { aggregateKey } from './raw-row.ts';

/** A row with the place it was read from. */
export type Located<T> = T & { node_id: number; shard: number };

/** Count names, built once rather than per row. */
const LIST_ROWS: Record<RawMember['list'], string> = { subscriber: 'subscriber_rows', allow: 'allow_rows', deny: 'deny_rows' };
const ARCHIVED_KEYS = new Map<string, string>();
function archivedKey(kind: string): string {
  let key = ARCHIVED_KEYS.get(kind);
  if (key === undefined) ARCHIVED_KEYS.set(kind, (key = `archived_${kind}`));
  return key;
}

/**
 * Adds the place to a row the scanner handed over (rows are the sink's to
 * keep): the same fields, in the same order, as `{ ...row, node_id, shard }`,
 * without copying every row.
 */
function locate<T extends object>(row: T, node_id: number, shard: number): Located<T> {
  const r = row as Located<T>;
  r.node_id = node_id;
  r.shard = shard;
  return r;
}

/** Per channel hash: its log tail and what became of its message rows. */
export interface TailState {
  last_seq: number;
  set_time_ns: string;
  node_id: number;
  shard: number;
  messages: number;
  clipped: number;
  v2_channel_id?: string;
  channel_id?: string;
  channel_type?: number;
}

/** What the plan makes of the rows: its policy, its bound quarantine entries, and where left-out rows go. */
export interface CollectOptions {
  policy: Policy;
  quarantine: Quarantine;
  excludedOut: JsonlWriter;
  /** Several source nodes: keep each channel's log (message id and term per seq) and the channel cluster configs, to choose replicas. */
  keepLog?: boolean;
}

const b64 = (v: Uint8Array) => Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');

/**
 * Gathers the decoded rows of every shard. Messages are checked and streamed
 * to the messages file as they arrive (the tails are read first); the smaller
 * tables are kept until every shard has been read, because their channel
 * hashes can only be resolved then.
 */
export class Collector {
  readonly findings = new Findings();
  readonly tails = new Map<string, TailState>();
  readonly users: Located<RawUser>[] = [];
  readonly devices: Located<RawDevice>[] = [];
  readonly channelInfos: Located<RawChannelInfo>[] = [];
  readonly members: Located<RawMember>[] = [];
  readonly conversations: Located<RawConversation>[] = [];
  readonly systemUids: Located<{ uid: string }>[] = [];
  /** Channel hash → plaintext channel, from every row that stores one. */
  readonly dictionary = new Map<string, { id: string; type: number }>();
  readonly counts: Record<string, number> = {};
  retained = 0;
  /** Message ids of the carried messages, with their first rows. */
  private readonly carriedIds = new CarriedIds();
  /** Duplicate pairs inside a channel, resolved once every shard is read (`resolveDuplicates`). */
  readonly duplicates: DupEdge[] = [];
  /** Rows left out by `exclude_cmd`/`exclude_streams`/quarantine, per reason. */
  readonly excludedCounts: Record<string, number> = {};
  /** Channels (hash) with a message left out from inside their log: without `compact_sequences` they would have gaps. */
  readonly gapped = new Map<string, { node_id: number; shard: number; channel_id: string; channel_type: number; seq: number }>();
  /** With `keepLog`: per channel hash, `<message id>:<term>` of every seq up to the tail (index seq - 1). */
  readonly logs = new Map<string, string[]>();
  /** With `keepLog`: per channel hash, the columns of its channel cluster config row (0B). */
  readonly configs = new Map<string, Map<number, Uint8Array>>();
  /** Client message numbers of the current channel's carried rows and of its left-out stream rows (`exclude_streams`). */
  private readonly carriedCmns = new Set<string>();
  private readonly streamCmns = new Set<string>();
  /** `type:id` of the channels `dictionary` holds under their own hash. */
  private readonly learned = new Set<string>();
  private readonly v3Ids = new Map<string, string>();
  /** `type:id` of a v2 channel → its v3 id, once it has passed `v3` without a finding. */
  private readonly cleanV3 = new Map<string, string>();
  private currentChannel = '';
  private readonly clientMsgNos = new ClientMsgNos();
  /** The last message channel checked and found valid (message rows come grouped by channel). */
  private lastChecked: { ch: string; shard: number; v2: string; type: number; v3: string; head: string } | undefined;

  constructor(
    private readonly nodeId: number,
    private readonly shardCount: number,
    private readonly messagesOut: JsonlWriter,
    private readonly archivedOut: JsonlWriter,
    private readonly options: CollectOptions,
  ) {}

  /** Whether a carried message of a channel other than `ch` holds `messageId`. */
  idUsedElsewhere(messageId: string, ch: string): boolean {
    return this.carriedIds.usedElsewhere(messageId, ch);
  }

  private count(what: string): void {
    this.counts[what] = (this.counts[what] ?? 0) + 1;
  }

  /** Adds a plaintext channel to the dictionary; two plaintexts under one hash block. */
  learn(id: string, type: number, where: { shard?: number }): void {
    // a channel the dictionary holds under its own hash needs neither the hash nor a finding again
    const name = `${type}:${id}`;
    if (this.learned.has(name)) return;
    const ch = channelHash(id, type);
    const known = this.dictionary.get(ch);
    if (!known) {
      this.dictionary.set(ch, { id, type });
      this.learned.add(name);
    } else if (known.id === id && known.type === type) {
      this.learned.add(name);
    } else {
      this.findings.block({
        code: 'channel_hash_collision',
        detail: `"${known.id}"/${known.type} and "${id}"/${type} share hash ${ch}`,
        node_id: this.nodeId,
        ...where,
      });
    }
  }

  /** The v3 id of a channel, blocking on malformed person ids and on two v2 ids meeting in one v3 id. */
  v3(id: string, type: number, where: { shard?: number; message_seq?: number; uid?: string }): string | undefined {
    const name = `${type}:${id}`;
    const clean = this.cleanV3.get(name);
    if (clean !== undefined) return clean;
    const r = v3ChannelId(id, type);
    if ('problem' in r) {
      this.findings.block({
        code: 'invalid_person_channel',
        detail: r.problem,
        node_id: this.nodeId,
        channel_id: id,
        channel_type: type,
        ...where,
      });
      return undefined;
    }
    const key = `${type}:${r.id}`;
    const prior = this.v3Ids.get(key);
    if (prior === undefined || prior === id) {
      this.v3Ids.set(key, id);
      // the v3 id of this v2 channel is its own from now on: later calls need no check
      this.cleanV3.set(name, r.id);
    } else {
      this.findings.block({
        code: 'person_channel_collision',
        detail: `v2 channels "${prior}" and "${id}" both map to "${r.id}"`,
        node_id: this.nodeId,
        channel_id: id,
        channel_type: type,
        ...where,
      });
    }
    return r.id;
  }

  /** The sink for one shard. */
  sink(shard: number): ReplaySink {
    const node_id = this.nodeId;
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the sink's methods run with the sink as `this`
    const self = this;
    const misplaced = (expected: number, what: string, extra: object) => {
      if (expected === shard) return false;
      self.findings.block({
        code: 'misplaced_row',
        detail: `${what} sits in shard ${shard}; v2 routes it to shard ${expected} and never reads it here`,
        node_id,
        shard,
        ...extra,
      });
      return true;
    };
    return {
      loadingTails: true,
      tail(ch, lastSeq, setTimeNs) {
        if (!this.loadingTails) return;
        if (self.tails.has(ch)) {
          self.findings.block({ code: 'duplicate_tail', detail: `channel hash ${ch} has a last-seq key in two shards`, node_id, shard });
          return;
        }
        misplaced(channelShard(ch, self.shardCount), `last-seq key of channel hash ${ch}`, {});
        self.tails.set(ch, { last_seq: lastSeq, set_time_ns: setTimeNs, node_id, shard, messages: 0, clipped: 0 });
      },
      message(m) {
        self.count('message_rows');
        self.message(m, shard, m);
      },
      encodedMessage(m, encoded) {
        self.count('message_rows');
        self.message(m, shard, encoded);
      },
      user(u) {
        self.count('users');
        if (!misplaced(stringShard(u.uid, self.shardCount), `user row of "${u.uid}"`, { uid: u.uid }))
          self.users.push(locate(u, node_id, shard));
      },
      device(d) {
        self.count('devices');
        if (!misplaced(stringShard(d.uid, self.shardCount), `device row ${d.v2_device_id}`, { uid: d.uid }))
          self.devices.push(locate(d, node_id, shard));
      },
      channelInfo(c) {
        self.count('channel_infos');
        if (misplaced(channelShard(c.ch, self.shardCount), `channel-info row of hash ${c.ch}`, { channel_id: c.channel_id })) return;
        if (c.channel_id !== '' && channelHash(c.channel_id, c.channel_type) !== c.ch) {
          self.findings.block({
            code: 'channel_info_hash_mismatch',
            detail: `row hash ${c.ch} is not the hash of its channel id`,
            node_id,
            shard,
            channel_id: c.channel_id,
            channel_type: c.channel_type,
          });
          return;
        }
        if (c.channel_id !== '') self.learn(c.channel_id, c.channel_type, { shard });
        self.channelInfos.push(locate(c, node_id, shard));
      },
      member(m) {
        self.count(LIST_ROWS[m.list]);
        if (!misplaced(channelShard(m.ch, self.shardCount), `${m.list} row of "${m.uid}"`, { uid: m.uid }))
          self.members.push(locate(m, node_id, shard));
      },
      conversation(c) {
        self.count('conversations');
        if (misplaced(stringShard(c.uid, self.shardCount), `conversation row ${c.v2_id}`, { uid: c.uid })) return;
        self.learn(c.channel_id, c.channel_type, { shard });
        self.conversations.push(locate(c, node_id, shard));
      },
      systemUid(uid) {
        self.count('system_uids');
        self.systemUids.push({ uid, node_id, shard });
      },
      clusterConfig(_ch, channelId, channelType) {
        self.count('cluster_configs');
        if (channelId !== '') self.learn(channelId, channelType, { shard });
      },
      archived(kind, key, value) {
        self.count(archivedKey(kind));
        if (kind === 'cluster_config' && self.options.keepLog && key.length === 14) {
          const ch = Buffer.from(key.buffer, key.byteOffset + 4, 8).toString('hex');
          let cols = self.configs.get(ch);
          if (!cols) self.configs.set(ch, (cols = new Map()));
          cols.set((key[12]! << 8) | key[13]!, value.slice());
        }
        const rec: ArchivedRecord = { kind, node_id, shard, key: b64(key), value: b64(value) };
        writeArchivedLine(self.archivedOut, rec);
        self.archivedOut.endLine();
      },
      problem(kind, key, detail) {
        if (
          (kind === 'legacy_stream_storage' && self.options.policy.excludeLegacyStreams) ||
          (kind === 'legacy_stream_v2' && self.options.policy.excludeStreams)
        ) {
          this.archived(kind === 'legacy_stream_v2' ? 'legacy_stream_v2' : 'legacy_stream', key, new Uint8Array(0));
          return;
        }
        self.findings.block({ code: kind, detail, node_id, shard, key: b64(key) });
      },
    };
  }

  /** Where a message row's finding is (built only when there is one). */
  private place(
    m: CheckedMessage,
    shard: number,
  ): { node_id: number; shard: number; channel_id: string; channel_type: number; message_seq: number } {
    return { node_id: this.nodeId, shard, channel_id: m.channel_id, channel_type: m.channel_type, message_seq: m.seq };
  }

  /** Checks a message row and writes its line (or its excluded line); `row` is the whole row or its line's tail already encoded. */
  private message(m: CheckedMessage, shard: number, row: RawMessage | Uint8Array): void {
    if (m.ch !== this.currentChannel) {
      this.currentChannel = m.ch;
      this.clientMsgNos.clear();
      this.carriedCmns.clear();
      this.streamCmns.clear();
    }
    const tail = this.tails.get(m.ch);
    if (!tail || m.seq > tail.last_seq) {
      if (tail) tail.clipped++;
      else
        this.findings.warn({
          code: 'message_without_tail',
          detail: 'message row of a channel without a last-seq key; v2 never shows it',
          ...this.place(m, shard),
        });
      return;
    }
    if (this.options.keepLog) {
      let log = this.logs.get(m.ch);
      if (!log) this.logs.set(m.ch, (log = []));
      log[m.seq - 1] = `${m.message_id}:${m.term}`;
    }
    const q = this.options.quarantine.hasMessages(this.nodeId, shard)
      ? this.options.quarantine.message(this.nodeId, shard, m.ch, m.seq)
      : undefined;
    if (q) {
      // a quarantined row is checked no further: it is what the entry takes out
      this.exclude(
        `quarantine:${q.reason}`,
        shard,
        m,
        row,
        this.v3(m.channel_id, m.channel_type, { shard, message_seq: m.seq }) ?? m.channel_id,
        q,
      );
      this.gap(m, shard);
      return;
    }
    const known = this.lastChecked;
    const same =
      known !== undefined && known.ch === m.ch && known.shard === shard && known.v2 === m.channel_id && known.type === m.channel_type;
    if (!same) {
      if (channelHash(m.channel_id, m.channel_type) !== m.ch) {
        const key = b64(aggregateKey.message(m.ch, m.seq));
        this.findings.block({
          code: 'invalid_message_channel',
          detail: `the row's channel hash ${m.ch} is not the hash of its ChannelId column`,
          ...this.place(m, shard),
          key,
          evidence: { quarantine: { node_id: this.nodeId, shard, key } },
        });
        return;
      }
      if (channelShard(m.ch, this.shardCount) !== shard) {
        this.findings.block({
          code: 'misplaced_row',
          detail: `message sits in shard ${shard}; v2 routes it to shard ${channelShard(m.ch, this.shardCount)}`,
          ...this.place(m, shard),
        });
        return;
      }
    }
    if (m.column_seq !== m.seq)
      this.findings.block({
        code: 'message_seq_mismatch',
        detail: `MessageSeq column ${m.column_seq} differs from the key`,
        ...this.place(m, shard),
      });
    if (m.header >> 4 !== 5 || (m.header & 0x08) !== 0) {
      this.findings.block({
        code: 'unsupported_message_header',
        detail: `header byte 0x${m.header.toString(16)} (frame type or DUP bit cannot be stored)`,
        ...this.place(m, shard),
      });
    }
    if (m.stream_no !== '') this.findings.block({ code: 'message_stream_no', detail: 'StreamNo has no v3 field', ...this.place(m, shard) });
    const channelId = same ? known.v3 : this.v3(m.channel_id, m.channel_type, { shard, message_seq: m.seq });
    if (channelId === undefined) return;
    const head = same ? known.head : messageHead(this.nodeId, shard, channelId);
    // a channel that passed the hash, shard and v3 checks without a finding passes them again for its next rows
    if (!same) {
      const clean = this.v3Ids.get(`${m.channel_type}:${channelId}`) === m.channel_id;
      this.lastChecked = clean ? { ch: m.ch, shard, v2: m.channel_id, type: m.channel_type, v3: channelId, head } : undefined;
    }
    if (tail.channel_id === undefined) {
      tail.channel_id = channelId;
      tail.v2_channel_id = m.channel_id;
      tail.channel_type = m.channel_type;
      this.learn(m.channel_id, m.channel_type, { shard });
    }
    const policy = this.options.policy;
    if (policy.excludeCmd && m.channel_id.endsWith(CMD_SUFFIX)) {
      this.exclude('exclude_cmd', shard, m, row, channelId);
      return;
    }
    this.duplicateChecks(m, shard);
    if (policy.excludeStreams && (m.setting & 0x02) !== 0) {
      if (m.client_msg_no !== '') {
        if (this.carriedCmns.has(m.client_msg_no)) this.sharedStream(m, shard);
        this.streamCmns.add(m.client_msg_no);
      }
      this.exclude('exclude_streams', shard, m, row, channelId);
      this.gap(m, shard);
      return;
    }
    if (policy.excludeStreams && m.client_msg_no !== '') {
      if (this.streamCmns.has(m.client_msg_no)) this.sharedStream(m, shard);
      this.carriedCmns.add(m.client_msg_no);
    }
    tail.messages++;
    this.retained++;
    this.messagesOut.text(head);
    if (row instanceof Uint8Array) this.messagesOut.bytes(row);
    else writeMessageTail(this.messagesOut, row);
    this.messagesOut.endLine();
  }

  /** Finds a repeated message id (blocking across channels) and duplicate pairs inside the channel (resolved later). */
  private duplicateChecks(m: CheckedMessage, shard: number): void {
    this.registerId(this.nodeId, shard, m);
    if (m.from_uid !== '' && m.client_msg_no !== '') {
      const seen = this.clientMsgNos.addOrGet(m.from_uid, m.client_msg_no, m.seq);
      if (seen !== undefined) {
        this.duplicates.push({
          node_id: this.nodeId,
          shard,
          ch: m.ch,
          v2_channel_id: m.channel_id,
          channel_type: m.channel_type,
          older: seen,
          newer: m.seq,
          relation: 'client_msg_no',
        });
      }
    }
  }

  /**
   * Registers a carried message's id: a second use in the same channel is a
   * duplicate pair (resolved later), in another channel a blocker. Also used
   * when several nodes' rows are merged (`node`: where the row was read).
   */
  registerId(
    node: number,
    shard: number,
    m: Pick<CheckedMessage, 'message_id' | 'ch' | 'seq' | 'channel_id' | 'channel_type' | 'timestamp'>,
  ): void {
    const row = {
      node_id: node,
      shard,
      ch: m.ch,
      channel_id: m.channel_id,
      channel_type: m.channel_type,
      seq: m.seq,
      timestamp: m.timestamp,
    };
    const prior = this.carriedIds.register(m.message_id, row);
    if (!prior) return;
    if (prior.ch === m.ch) {
      this.duplicates.push({
        node_id: node,
        shard,
        ch: m.ch,
        v2_channel_id: m.channel_id,
        channel_type: m.channel_type,
        older: prior.seq,
        newer: m.seq,
        relation: 'message_id',
      });
      return;
    }
    // the row written later takes the blame (the first one held the id): it is the one a quarantine entry takes out
    const place = (r: typeof row) => ({
      node_id: r.node_id,
      shard: r.shard,
      channel_id: r.channel_id,
      channel_type: r.channel_type,
      message_seq: r.seq,
      key: b64(aggregateKey.message(r.ch, r.seq)),
      timestamp: r.timestamp,
    });
    const first = place(prior);
    const second = place(row);
    const blame = second.timestamp >= first.timestamp ? second : first;
    this.findings.block({
      code: 'duplicate_message_id',
      detail: `message id ${m.message_id} is also used by ${first.channel_id}/${first.channel_type} seq ${first.message_seq} (shard ${first.shard})`,
      node_id: node,
      shard,
      channel_id: m.channel_id,
      channel_type: m.channel_type,
      message_seq: m.seq,
      evidence: {
        message_id: m.message_id,
        clash: [first, second],
        quarantine: { node_id: blame.node_id, shard: blame.shard, key: blame.key },
      },
    });
  }

  private sharedStream(m: CheckedMessage, shard: number): void {
    this.findings.block({
      code: 'stream_identity_shared',
      detail: `client_msg_no "${m.client_msg_no}" names both a stream message exclude_streams leaves out and a message that is carried: their event projections cannot be told apart`,
      ...this.place(m, shard),
    });
  }

  /** Notes a message left out from inside its channel's log. */
  private gap(m: CheckedMessage, shard: number): void {
    if (!this.gapped.has(m.ch))
      this.gapped.set(m.ch, { node_id: this.nodeId, shard, channel_id: m.channel_id, channel_type: m.channel_type, seq: m.seq });
  }

  /** Writes a message the plan leaves out, complete, to the excluded records. */
  private exclude(reason: string, shard: number, m: CheckedMessage, row: RawMessage | Uint8Array, channelId: string, q?: BoundEntry): void {
    this.excludedCounts[reason] = (this.excludedCounts[reason] ?? 0) + 1;
    writeExcludedMessage(
      this.options.excludedOut,
      {
        reason,
        node_id: this.nodeId,
        shard,
        key: q ? q.key : b64(aggregateKey.message(m.ch, m.seq)),
        sha256: q?.sha256,
        head: messageHead(this.nodeId, shard, channelId),
      },
      row,
    );
  }
}
