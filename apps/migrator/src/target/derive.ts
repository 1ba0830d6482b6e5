import { Buffer } from 'node:buffer';
import { ChannelType, CMD_SUFFIX, personParticipants } from '@parley/shared';
import { tokenDigest, type ImportTarget, type NewRow } from '@parley/store';
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
 * open, migrated store (one transaction per table group, messages in
 * batches). The rules:
 * devices take v2's "smallest device id per (uid, flag)"; tokens become
 * digests; subscribers and person-chat participants are live members from
 * seq 1; messages keep their seq, or are renumbered 1..N with
 * `compact_sequences`; tails become channel_log floors; conversations are
 * applied by `applyConversations` (command conversations become command
 * bindings, chat conversations set positions and visibility).
 */
export async function deriveInto(target: ImportTarget, records: string, policy: Policy): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  const bump = (k: string, n = 1) => (counts[k] = (counts[k] ?? 0) + n);

  const devices = new Map<string, CredentialRecord>();
  for (const d of readJsonl<CredentialRecord>(recordPath(records, 'credentials'))) {
    const k = `${d.uid}\u0000${d.device_flag}`;
    const prior = devices.get(k);
    if (!prior || BigInt(d.v2_device_id) < BigInt(prior.v2_device_id)) devices.set(k, d);
  }
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

  await target.transaction(async (rows) => {
    await rows.devices(
      [...devices.values()].map((d) => ({
        uid: d.uid,
        device_flag: d.device_flag,
        device_level: d.device_level,
        device_id: '',
        token_sha256: d.token === '' ? '' : tokenDigest(d.token),
        updated_at: nsToMs(d.updated_at_ns),
      })),
    );
    bump('devices', devices.size);
    const b = (x: boolean) => (x ? 1 : 0);
    const channels = [...readJsonl<ChannelRecord>(recordPath(records, 'channels'))].map((c) => ({
      channel_id: c.channel_id,
      channel_type: c.channel_type,
      ban: b(c.ban),
      disband: b(c.disband),
      large: b(c.large),
      send_ban: b(c.send_ban),
      allow_stranger: b(c.allow_stranger),
      created_at: nsToMs(c.created_at_ns),
      updated_at: nsToMs(c.updated_at_ns),
    }));
    await rows.channels(channels);
    bump('channels', channels.length);
    const lists: Array<{ channel_id: string; channel_type: number; list: string; uid: string }> = [];
    for (const m of readJsonl<MemberRecord>(recordPath(records, 'members'))) {
      if (m.list === 'subscriber') member(m.channel_id, m.channel_type, m.uid, nsToMs(m.updated_at_ns)).removed = 0;
      else lists.push({ channel_id: m.channel_id, channel_type: m.channel_type, list: m.list, uid: m.uid });
    }
    await rows.memberLists(lists);
    bump('member_lists', lists.length);
    const system = [...readJsonl<SystemUidRecord>(recordPath(records, 'system_uids'))].map((x) => x.uid);
    await rows.systemUids(system);
    bump('system_uids', system.length);
  });

  const seqs = new SeqMap(policy.compactSequences);
  const lastSend = new Map<string, number>();
  const t0 = Date.now();
  let batch: MessageRecord[] = [];
  const flush = (batch: MessageRecord[]) =>
    target.transaction(async (rows) => {
      const out: Array<NewRow<'messages'>> = [];
      for (const m of batch) {
        const seq = seqs.add(channelKey(m.channel_id, m.channel_type), m.message_seq);
        out.push({
          channel_id: m.channel_id,
          channel_type: m.channel_type,
          message_seq: seq,
          message_id: BigInt(m.message_id),
          client_msg_no: m.client_msg_no,
          from_uid: m.from_uid,
          setting: m.setting,
          flags: m.header & FLAG_MASK,
          expire: m.expire,
          topic: m.topic,
          created_at: m.timestamp * 1000,
          payload: Buffer.from(m.payload, 'base64'),
        });
        if (m.from_uid !== '' && !m.channel_id.endsWith(CMD_SUFFIX)) {
          const k = key(m.channel_id, m.channel_type, m.from_uid);
          if ((lastSend.get(k) ?? 0) < seq) lastSend.set(k, seq);
        }
      }
      await rows.messages(out);
    });
  for (const m of readJsonl<MessageRecord>(recordPath(records, 'messages'))) {
    batch.push(m);
    if (batch.length >= 2000) {
      await flush(batch);
      bump('messages', batch.length);
      batch = [];
      progress(`import: ${counts.messages} messages (${rate(counts.messages ?? 0, Date.now() - t0)})`);
    }
  }
  await flush(batch);
  bump('messages', batch.length);

  const tails = new Map<string, number>();
  const logs: Array<{ channel_id: string; channel_type: number; tail_seq: number }> = [];
  for (const t of readJsonl<TailRecord>(recordPath(records, 'tails'))) {
    const ck = channelKey(t.channel_id, t.channel_type);
    const tail = seqs.position(ck, t.last_seq);
    tails.set(ck, tail);
    if (tail > 0) logs.push({ channel_id: t.channel_id, channel_type: t.channel_type, tail_seq: tail });
    if (t.channel_type === ChannelType.Person && !t.channel_id.endsWith(CMD_SUFFIX) && seqs.count(ck) > 0) {
      const pair = personParticipants(t.channel_id);
      if (pair) for (const uid of pair) member(t.channel_id, t.channel_type, uid, 0).removed = 0;
    }
  }
  await target.transaction((rows) => rows.channelLogs(logs));
  bump('channel_log', logs.length);

  const bindings = applyConversations(records, policy, { member, members, seqs, tails, counts });
  await target.transaction(async (rows) => {
    const memberships: Array<NewRow<'memberships'>> = [];
    for (const [k, m] of members) {
      m.last_send_seq = lastSend.get(k) ?? 0;
      const { conversation: _, ...row } = m;
      memberships.push(row);
    }
    await rows.memberships(memberships);
    bump('memberships', memberships.length);
    await rows.cmdBindings(bindings.map((b) => ({ ...b, removed: 0 })));
    bump('cmd_bindings', bindings.length);
  });
  return counts;
}
