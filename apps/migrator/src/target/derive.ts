import { ChannelType, CMD_SUFFIX, personParticipants } from '@parley/shared';
import { tokenDigest } from '@parley/server';
import type Database from 'better-sqlite3';
import { readJsonl } from '../archive/jsonl.ts';
import type { Policy } from '../policy.ts';
import { progress, rate } from '../stages/common.ts';
import { recordPath } from '../stages/records-dir.ts';
import type { ChannelRecord, CredentialRecord, MemberRecord, MessageRecord, SystemUidRecord, TailRecord } from '../v2/records.ts';
import { applyConversations, type Membership } from './derive-conversations.ts';
import { channelKey, SeqMap } from './seq-map.ts';

/** Unix nanoseconds (decimal string) → milliseconds. */
export function nsToMs(ns: string): number {
  return Number(BigInt(ns) / 1_000_000n);
}

/** Header bits Parley stores: 1 no_persist, 2 red_dot, 4 sync_once (v2 header bits 0-2). */
export const FLAG_MASK = 0x07;

const key = (channelId: string, type: number, uid: string) => `${type}\u0000${channelId}\u0000${uid}`;

/**
 * Writes the Parley rows derived from an archive's record files into an
 * open, migrated store (one transaction per table group). The rules:
 * devices take v2's "smallest device id per (uid, flag)"; tokens become
 * digests; subscribers and person-chat participants are live members from
 * seq 1; messages keep their seq, or are renumbered 1..N with
 * `compact_sequences`; tails become channel_log floors; conversations are
 * applied by `applyConversations` (command conversations become command
 * bindings, chat conversations set positions and visibility).
 */
export function deriveInto(db: Database.Database, records: string, policy: Policy): Record<string, number> {
  const counts: Record<string, number> = {};
  const bump = (k: string, n = 1) => (counts[k] = (counts[k] ?? 0) + n);

  const devices = new Map<string, CredentialRecord>();
  for (const d of readJsonl<CredentialRecord>(recordPath(records, 'credentials'))) {
    const k = `${d.uid}\u0000${d.device_flag}`;
    const prior = devices.get(k);
    if (!prior || BigInt(d.v2_device_id) < BigInt(prior.v2_device_id)) devices.set(k, d);
  }
  const insDevice = db.prepare(
    'insert into devices (uid, device_flag, device_level, device_id, token_sha256, updated_at) values (?, ?, ?, ?, ?, ?)',
  );
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
      m = {
        channel_id: channelId,
        channel_type: type,
        uid,
        join_seq: 1,
        read_seq: 0,
        deleted_to_seq: 0,
        activated_at: 0,
        last_send_seq: 0,
        removed: 1,
        unread_count: 0,
        updated_at: updatedAt,
        conversation: false,
      };
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
      insChannel.run(
        c.channel_id,
        c.channel_type,
        b(c.ban),
        b(c.disband),
        b(c.large),
        b(c.send_ban),
        b(c.allow_stranger),
        nsToMs(c.created_at_ns),
        nsToMs(c.updated_at_ns),
      );
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
  const seqs = new SeqMap(policy.compactSequences);
  const lastSend = new Map<string, number>();
  const t0 = Date.now();
  let batch: MessageRecord[] = [];
  const flush = db.transaction((rows: MessageRecord[]) => {
    for (const m of rows) {
      const seq = seqs.add(channelKey(m.channel_id, m.channel_type), m.message_seq);
      insMessage.run(
        m.channel_id,
        m.channel_type,
        seq,
        BigInt(m.message_id),
        m.client_msg_no,
        m.from_uid,
        m.setting,
        m.header & FLAG_MASK,
        m.expire,
        m.topic,
        m.timestamp * 1000,
        Buffer.from(m.payload, 'base64'),
      );
      if (m.from_uid !== '' && !m.channel_id.endsWith(CMD_SUFFIX)) {
        const k = key(m.channel_id, m.channel_type, m.from_uid);
        if ((lastSend.get(k) ?? 0) < seq) lastSend.set(k, seq);
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
  const tails = new Map<string, number>();
  db.transaction(() => {
    for (const t of readJsonl<TailRecord>(recordPath(records, 'tails'))) {
      const ck = channelKey(t.channel_id, t.channel_type);
      const tail = seqs.position(ck, t.last_seq);
      tails.set(ck, tail);
      if (tail > 0) {
        insLog.run(t.channel_id, t.channel_type, tail);
        bump('channel_log');
      }
      if (t.channel_type === ChannelType.Person && !t.channel_id.endsWith(CMD_SUFFIX) && seqs.count(ck) > 0) {
        const pair = personParticipants(t.channel_id);
        if (pair) for (const uid of pair) member(t.channel_id, t.channel_type, uid, 0).removed = 0;
      }
    }
  })();

  const bindings = applyConversations(records, policy, { member, members, seqs, tails, counts });
  const insMember = db.prepare(
    `insert into memberships (channel_id, channel_type, uid, join_seq, read_seq, deleted_to_seq, activated_at, last_send_seq, removed, unread_count, updated_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const insBinding = db.prepare(
    'insert into cmd_bindings (uid, channel_id, channel_type, start_seq, ack_seq, removed, updated_at) values (?, ?, ?, ?, ?, 0, ?)',
  );
  db.transaction(() => {
    for (const [k, m] of members) {
      m.last_send_seq = lastSend.get(k) ?? 0;
      insMember.run(
        m.channel_id,
        m.channel_type,
        m.uid,
        m.join_seq,
        m.read_seq,
        m.deleted_to_seq,
        m.activated_at,
        m.last_send_seq,
        m.removed,
        m.unread_count,
        m.updated_at,
      );
      bump('memberships');
    }
    for (const b of bindings) {
      insBinding.run(b.uid, b.channel_id, b.channel_type, b.start_seq, b.ack_seq, b.updated_at);
      bump('cmd_bindings');
    }
  })();
  return counts;
}
