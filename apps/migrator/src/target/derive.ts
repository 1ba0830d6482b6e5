import { ChannelType, CMD_SUFFIX, personParticipants } from '@parley/shared';
import { tokenDigest } from '@parley/server';
import type Database from 'better-sqlite3';
import { readJsonl } from '../archive/jsonl.ts';
import { progress, rate } from '../stages/common.ts';
import { recordPath } from '../stages/records-dir.ts';
import type {
  ChannelRecord, ConversationRecord, CredentialRecord, MemberRecord, MessageRecord, SystemUidRecord, TailRecord,
} from '../v2/records.ts';

/** Unix nanoseconds (decimal string) → milliseconds. */
export function nsToMs(ns: string): number {
  return Number(BigInt(ns) / 1_000_000n);
}

/** Header bits Parley stores: 1 no_persist, 2 red_dot, 4 sync_once (v2 header bits 0-2). */
export const FLAG_MASK = 0x07;

interface Membership {
  channel_id: string;
  channel_type: number;
  uid: string;
  join_seq: number;
  read_seq: number;
  deleted_to_seq: number;
  activated_at: number;
  last_send_seq: number;
  removed: number;
  unread_count: number;
  updated_at: number;
}

const key = (channelId: string, type: number, uid: string) => `${type}\u0000${channelId}\u0000${uid}`;

/**
 * Writes the Parley rows derived from an archive's record files into an
 * open, migrated store (one transaction per table group). The rules:
 * devices take v2's "smallest device id per (uid, flag)"; tokens become
 * digests; subscribers and person-chat participants are live members from
 * seq 1; conversations set read/delete positions, the unread count and the
 * activation time; members known only from a conversation are removed ones;
 * tails become channel_log floors.
 */
export function deriveInto(db: Database.Database, records: string): Record<string, number> {
  const counts: Record<string, number> = {};
  const bump = (k: string, n = 1) => (counts[k] = (counts[k] ?? 0) + n);

  const devices = new Map<string, CredentialRecord>();
  for (const d of readJsonl<CredentialRecord>(recordPath(records, 'credentials'))) {
    const k = `${d.uid}\u0000${d.device_flag}`;
    const prior = devices.get(k);
    if (!prior || BigInt(d.v2_device_id) < BigInt(prior.v2_device_id)) devices.set(k, d);
  }
  const insDevice = db.prepare('insert into devices (uid, device_flag, device_level, device_id, token_sha256, updated_at) values (?, ?, ?, ?, ?, ?)');
  const insChannel = db.prepare(
    'insert into channels (channel_id, channel_type, ban, disband, large, send_ban, allow_stranger, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const insList = db.prepare('insert into member_lists (channel_id, channel_type, list, uid) values (?, ?, ?, ?)');
  const insSystem = db.prepare('insert into system_uids (uid) values (?)');
  const members = new Map<string, Membership>();
  const member = (channelId: string, type: number, uid: string, updatedAt: number): Membership => {
    const k = key(channelId, type, uid);
    let m = members.get(k);
    if (!m) {
      m = { channel_id: channelId, channel_type: type, uid, join_seq: 1, read_seq: 0, deleted_to_seq: 0, activated_at: 0, last_send_seq: 0, removed: 1, unread_count: 0, updated_at: updatedAt };
      members.set(k, m);
    }
    m.updated_at = Math.max(m.updated_at, updatedAt);
    return m;
  };

  db.transaction(() => {
    for (const d of devices.values()) {
      insDevice.run(d.uid, d.device_flag, d.device_level, '', d.token === '' ? '' : tokenDigest(d.token), nsToMs(d.updated_at_ns));
      bump('devices');
    }
    for (const c of readJsonl<ChannelRecord>(recordPath(records, 'channels'))) {
      const b = (x: boolean) => (x ? 1 : 0);
      insChannel.run(c.channel_id, c.channel_type, b(c.ban), b(c.disband), b(c.large), b(c.send_ban), b(c.allow_stranger), nsToMs(c.created_at_ns), nsToMs(c.updated_at_ns));
      bump('channels');
    }
    for (const m of readJsonl<MemberRecord>(recordPath(records, 'members'))) {
      if (m.list === 'subscriber') {
        member(m.channel_id, m.channel_type, m.uid, nsToMs(m.updated_at_ns)).removed = 0;
      } else {
        insList.run(m.channel_id, m.channel_type, m.list, m.uid);
        bump('member_lists');
      }
    }
    for (const s of readJsonl<SystemUidRecord>(recordPath(records, 'system_uids'))) {
      insSystem.run(s.uid);
      bump('system_uids');
    }
  })();

  const insMessage = db.prepare(
    `insert into messages (channel_id, channel_type, message_seq, message_id, client_msg_no, from_uid, setting, flags, expire, topic, created_at, payload)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const lastSend = new Map<string, number>();
  const t0 = Date.now();
  let batch: MessageRecord[] = [];
  const flush = db.transaction((rows: MessageRecord[]) => {
    for (const m of rows) {
      insMessage.run(
        m.channel_id, m.channel_type, m.message_seq, BigInt(m.message_id), m.client_msg_no, m.from_uid, m.setting,
        m.header & FLAG_MASK, m.expire, m.topic, m.timestamp * 1000, Buffer.from(m.payload, 'base64'),
      );
      if (m.from_uid !== '' && !m.channel_id.endsWith(CMD_SUFFIX)) {
        const k = key(m.channel_id, m.channel_type, m.from_uid);
        if ((lastSend.get(k) ?? 0) < m.message_seq) lastSend.set(k, m.message_seq);
      }
    }
  });
  for (const m of readJsonl<MessageRecord>(recordPath(records, 'messages'))) {
    batch.push(m);
    if (batch.length >= 2000) {
      flush(batch);
      bump('messages', batch.length);
      batch = [];
      progress(`import: ${counts.messages} messages (${rate(counts.messages ?? 0, Date.now() - t0)})`);
    }
  }
  flush(batch);
  bump('messages', batch.length);

  const insLog = db.prepare('insert into channel_log (channel_id, channel_type, tail_seq) values (?, ?, ?)');
  db.transaction(() => {
    for (const t of readJsonl<TailRecord>(recordPath(records, 'tails'))) {
      insLog.run(t.channel_id, t.channel_type, t.last_seq);
      bump('channel_log');
      if (t.channel_type === ChannelType.Person && !t.channel_id.endsWith(CMD_SUFFIX) && t.messages > 0) {
        const pair = personParticipants(t.channel_id);
        if (pair) for (const uid of pair) member(t.channel_id, t.channel_type, uid, 0).removed = 0;
      }
    }
  })();
  for (const c of readJsonl<ConversationRecord>(recordPath(records, 'conversations'))) {
    const m = member(c.channel_id, c.channel_type, c.uid, nsToMs(c.updated_at_ns));
    if (c.channel_type === ChannelType.Person) m.removed = 0;
    else if (c.channel_id.endsWith(CMD_SUFFIX)) {
      const base = members.get(key(c.channel_id.slice(0, -CMD_SUFFIX.length), c.channel_type, c.uid));
      m.removed = base ? base.removed : 1;
    }
    m.read_seq = c.readed_to_msg_seq;
    m.deleted_to_seq = c.deleted_at_msg_seq;
    m.unread_count = c.unread_count;
    m.activated_at = Math.max(1, nsToMs(c.updated_at_ns) || nsToMs(c.created_at_ns));
  }
  const insMember = db.prepare(
    `insert into memberships (channel_id, channel_type, uid, join_seq, read_seq, deleted_to_seq, activated_at, last_send_seq, removed, unread_count, updated_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  db.transaction(() => {
    for (const [k, m] of members) {
      m.last_send_seq = lastSend.get(k) ?? 0;
      insMember.run(m.channel_id, m.channel_type, m.uid, m.join_seq, m.read_seq, m.deleted_to_seq, m.activated_at, m.last_send_seq, m.removed, m.unread_count, m.updated_at);
      bump('memberships');
    }
  })();
  return counts;
}
