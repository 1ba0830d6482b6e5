import type { JsonlWriter } from '../archive/jsonl.ts';
import { messageHead, writeArchivedLine, writeMessageTail } from '../archive/record-json.ts';
import type { ArchivedRecord } from '../v2/records.ts';
import { channelHash, channelShard, stringShard } from '../v2/hash.ts';
import type { CheckedMessage, RawChannelInfo, RawConversation, RawDevice, RawMember, RawMessage, RawUser } from '../v2/scan-shard.ts';
import type { ReplaySink } from '../v2/shard-events.ts';
import { v3ChannelId } from './channel-id.ts';
import { ClientMsgNos } from './client-msg-nos.ts';
import { Findings } from './findings.ts';
import { MessageIdTable } from './message-ids.ts';

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

/** Options of the strict default path that change what is read. */
export interface CollectOptions {
  /** `exclusions.legacy_stream_storage`: archive the legacy stream tables instead of blocking. */
  excludeLegacyStreams: boolean;
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
  /** Message ids seen, each with its first row's index into the `first*` columns (the place a second use names). */
  private readonly messageIds = new MessageIdTable();
  private readonly firstChannel: string[] = [];
  private readonly firstType: number[] = [];
  private readonly firstSeq: number[] = [];
  private readonly firstShard: number[] = [];
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
      this.findings.block({ code: 'channel_hash_collision', detail: `"${known.id}"/${known.type} and "${id}"/${type} share hash ${ch}`, node_id: this.nodeId, ...where });
    }
  }

  /** The v3 id of a channel, blocking on malformed person ids and on two v2 ids meeting in one v3 id. */
  v3(id: string, type: number, where: { shard?: number; message_seq?: number; uid?: string }): string | undefined {
    const name = `${type}:${id}`;
    const clean = this.cleanV3.get(name);
    if (clean !== undefined) return clean;
    const r = v3ChannelId(id, type);
    if ('problem' in r) {
      this.findings.block({ code: 'invalid_person_channel', detail: r.problem, node_id: this.nodeId, channel_id: id, channel_type: type, ...where });
      return undefined;
    }
    const key = `${type}:${r.id}`;
    const prior = this.v3Ids.get(key);
    if (prior === undefined || prior === id) {
      this.v3Ids.set(key, id);
      // the v3 id of this v2 channel is its own from now on: later calls need no check
      this.cleanV3.set(name, r.id);
    } else {
      this.findings.block({ code: 'person_channel_collision', detail: `v2 channels "${prior}" and "${id}" both map to "${r.id}"`, node_id: this.nodeId, channel_id: id, channel_type: type, ...where });
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
      self.findings.block({ code: 'misplaced_row', detail: `${what} sits in shard ${shard}; v2 routes it to shard ${expected} and never reads it here`, node_id, shard, ...extra });
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
        if (!misplaced(stringShard(u.uid, self.shardCount), `user row of "${u.uid}"`, { uid: u.uid })) self.users.push(locate(u, node_id, shard));
      },
      device(d) {
        self.count('devices');
        if (!misplaced(stringShard(d.uid, self.shardCount), `device row ${d.v2_device_id}`, { uid: d.uid })) self.devices.push(locate(d, node_id, shard));
      },
      channelInfo(c) {
        self.count('channel_infos');
        if (misplaced(channelShard(c.ch, self.shardCount), `channel-info row of hash ${c.ch}`, { channel_id: c.channel_id })) return;
        if (c.channel_id !== '' && channelHash(c.channel_id, c.channel_type) !== c.ch) {
          self.findings.block({ code: 'channel_info_hash_mismatch', detail: `row hash ${c.ch} is not the hash of its channel id`, node_id, shard, channel_id: c.channel_id, channel_type: c.channel_type });
          return;
        }
        if (c.channel_id !== '') self.learn(c.channel_id, c.channel_type, { shard });
        self.channelInfos.push(locate(c, node_id, shard));
      },
      member(m) {
        self.count(LIST_ROWS[m.list]);
        if (!misplaced(channelShard(m.ch, self.shardCount), `${m.list} row of "${m.uid}"`, { uid: m.uid })) self.members.push(locate(m, node_id, shard));
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
        const rec: ArchivedRecord = { kind, node_id, shard, key: b64(key), value: b64(value) };
        writeArchivedLine(self.archivedOut, rec);
        self.archivedOut.endLine();
      },
      problem(kind, key, detail) {
        if (kind === 'legacy_stream_storage' && self.options.excludeLegacyStreams) {
          this.archived('legacy_stream', key, new Uint8Array(0));
          return;
        }
        self.findings.block({ code: kind, detail, node_id, shard, key: b64(key) });
      },
    };
  }

  /** Where a message row's finding is (built only when there is one). */
  private place(m: CheckedMessage, shard: number): { node_id: number; shard: number; channel_id: string; channel_type: number; message_seq: number } {
    return { node_id: this.nodeId, shard, channel_id: m.channel_id, channel_type: m.channel_type, message_seq: m.seq };
  }

  /** Checks a message row and writes its line; `row` is the whole row or its line's tail already encoded. */
  private message(m: CheckedMessage, shard: number, row: RawMessage | Uint8Array): void {
    if (m.ch !== this.currentChannel) {
      this.currentChannel = m.ch;
      this.clientMsgNos.clear();
    }
    const tail = this.tails.get(m.ch);
    if (!tail || m.seq > tail.last_seq) {
      if (tail) tail.clipped++;
      else this.findings.warn({ code: 'message_without_tail', detail: 'message row of a channel without a last-seq key; v2 never shows it', ...this.place(m, shard) });
      return;
    }
    const known = this.lastChecked;
    const same = known !== undefined && known.ch === m.ch && known.shard === shard && known.v2 === m.channel_id && known.type === m.channel_type;
    if (!same) {
      if (channelHash(m.channel_id, m.channel_type) !== m.ch) {
        this.findings.block({ code: 'invalid_message_channel', detail: `the row's channel hash ${m.ch} is not the hash of its ChannelId column`, ...this.place(m, shard) });
        return;
      }
      if (channelShard(m.ch, this.shardCount) !== shard) {
        this.findings.block({ code: 'misplaced_row', detail: `message sits in shard ${shard}; v2 routes it to shard ${channelShard(m.ch, this.shardCount)}`, ...this.place(m, shard) });
        return;
      }
    }
    if (m.column_seq !== m.seq) this.findings.block({ code: 'message_seq_mismatch', detail: `MessageSeq column ${m.column_seq} differs from the key`, ...this.place(m, shard) });
    if (m.header >> 4 !== 5 || (m.header & 0x08) !== 0) {
      this.findings.block({ code: 'unsupported_message_header', detail: `header byte 0x${m.header.toString(16)} (frame type or DUP bit cannot be stored)`, ...this.place(m, shard) });
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
    const prior = this.messageIds.addOrGet(m.message_id, this.firstSeq.length);
    if (prior >= 0) {
      this.findings.block({
        code: 'duplicate_message_id',
        detail: `message id ${m.message_id} is also used by ${this.firstChannel[prior]}/${this.firstType[prior]} seq ${this.firstSeq[prior]} (shard ${this.firstShard[prior]})`,
        ...this.place(m, shard),
      });
    } else {
      this.firstChannel.push(m.channel_id);
      this.firstType.push(m.channel_type);
      this.firstSeq.push(m.seq);
      this.firstShard.push(shard);
    }
    if (m.from_uid !== '' && m.client_msg_no !== '') {
      const seen = this.clientMsgNos.addOrGet(m.from_uid, m.client_msg_no, m.seq);
      if (seen !== undefined) {
        this.findings.block({
          code: 'duplicate_client_msg_no',
          detail: `client_msg_no "${m.client_msg_no}" of "${m.from_uid}" is also used by seq ${seen} of this channel`,
          ...this.place(m, shard),
        });
      }
    }
    tail.messages++;
    this.retained++;
    this.messagesOut.text(head);
    if (row instanceof Uint8Array) this.messagesOut.bytes(row);
    else writeMessageTail(this.messagesOut, row);
    this.messagesOut.endLine();
  }
}
