import { Buffer } from 'node:buffer';
import { CMD_SUFFIX } from '@parley/shared';
import type { JsonlWriter } from '../archive/jsonl.ts';
import { writeMemberLine } from '../archive/record-json.ts';
import { channelHash } from '../v2/hash.ts';
import type {
  ChannelRecord,
  CredentialRecord,
  ExcludedRecord,
  MemberRecord,
  RecordFile,
  SystemUidRecord,
  TailRecord,
  UserRecord,
} from '../v2/records.ts';
import type { Collector } from './collector.ts';
import { writeConversations, type ConversationContext } from './conversations.ts';
import { aggregateKey } from './raw-row.ts';

/**
 * Completes the hash → channel dictionary with synthetic candidates (spec
 * v2-storage §4.4): `(uid, 1)` for every known uid (of `c`, or of `from`
 * when several nodes' rows are merged), `X____cmd` for every known channel.
 */
export function completeDictionary(c: Collector, from: readonly Collector[] = [c]): void {
  const uids = new Set<string>();
  for (const x of from) {
    for (const r of x.users) uids.add(r.uid);
    for (const r of x.devices) uids.add(r.uid);
    for (const r of x.members) uids.add(r.uid);
    for (const r of x.conversations) uids.add(r.uid);
    for (const r of x.systemUids) uids.add(r.uid);
  }
  for (const uid of uids) if (uid !== '' && !c.dictionary.has(channelHash(uid, 1))) c.learn(uid, 1, {});
  for (const { id, type } of [...c.dictionary.values()]) {
    if (!id.endsWith(CMD_SUFFIX)) {
      const cmd = channelHash(id + CMD_SUFFIX, type);
      if (!c.dictionary.has(cmd)) c.dictionary.set(cmd, { id: id + CMD_SUFFIX, type });
    }
  }
}

/**
 * Resolves the hash-keyed rows, applies the remaining checks and the plan's
 * rules and writes every record file but messages/archived. Returns problems
 * with plan entries (the run stops on any) and what was left out.
 */
export function writeResolved(
  c: Collector,
  out: Record<RecordFile, JsonlWriter>,
  ctx: Omit<ConversationContext, 'out' | 'excluded'>,
): { problems: string[]; archivedUnread: number } {
  completeDictionary(c);
  const f = c.findings;

  const byFlag = new Map<string, number>();
  for (const d of c.devices) {
    const rec: CredentialRecord = d;
    out.credentials.write(rec);
    const k = `${d.uid}\u0000${d.device_flag}`;
    byFlag.set(k, (byFlag.get(k) ?? 0) + 1);
  }
  for (const [k, n] of byFlag) {
    if (n > 1) {
      const [uid, flag] = k.split('\u0000');
      f.warn({
        code: 'duplicate_device_rows',
        detail: `${n} device rows for device_flag ${flag}; v2's rule (smallest device id) is applied`,
        node_id: c.devices[0]?.node_id,
        uid,
      });
    }
  }
  for (const u of c.users) {
    const rec: UserRecord = {
      node_id: u.node_id,
      shard: u.shard,
      uid: u.uid,
      plugin_no: u.plugin_no,
      created_at_ns: u.created_at_ns,
      updated_at_ns: u.updated_at_ns,
    };
    out.users.write(rec);
  }
  for (const ci of c.channelInfos) {
    if (ci.channel_id === '') {
      const known = c.dictionary.get(ci.ch);
      f.warn({
        code: 'channel_info_without_id',
        detail: `count-only channel-info row (hash ${ci.ch}${known ? `, ${known.id}/${known.type}` : ''}) is treated as absent, as v2 does`,
        node_id: ci.node_id,
        shard: ci.shard,
      });
      continue;
    }
    const { ch: _ch, ...rest } = ci;
    const rec: ChannelRecord = rest;
    out.channels.write(rec);
  }
  for (const m of c.members) {
    const q = m.list === 'allow' ? ctx.quarantine.allow(m.node_id, m.shard, m.ch, m.uid) : undefined;
    if (q) {
      const { node_id, shard, ...record } = m;
      const rec: ExcludedRecord = {
        kind: 'member',
        reason: `quarantine:${q.reason}`,
        node_id,
        shard,
        key: q.key,
        sha256: q.sha256,
        record: record as unknown as Record<string, unknown>,
      };
      out.excluded.write(rec);
      c.excludedCounts[rec.reason] = (c.excludedCounts[rec.reason] ?? 0) + 1;
      continue;
    }
    const known = c.dictionary.get(m.ch);
    if (!known) {
      const code = m.list === 'allow' ? 'unresolved_allowlist_channel' : `unresolved_${m.list}_channel`;
      const table = m.list === 'allow' ? 0x0801 : m.list === 'deny' ? 0x0701 : 0x0401;
      const key = Buffer.from(aggregateKey.member(table, m.ch, m.uid)).toString('base64');
      f.block({
        code,
        detail: `${m.list} row of "${m.uid}" under channel hash ${m.ch} that no known channel has`,
        node_id: m.node_id,
        shard: m.shard,
        uid: m.uid,
        key,
        ...(m.list === 'allow' ? { evidence: { quarantine: { node_id: m.node_id, shard: m.shard, key } } } : {}),
      });
      continue;
    }
    const id = c.v3(known.id, known.type, { shard: m.shard, uid: m.uid });
    if (id === undefined) continue;
    const rec: MemberRecord = {
      node_id: m.node_id,
      shard: m.shard,
      list: m.list,
      channel_id: id,
      channel_type: known.type,
      uid: m.uid,
      created_at_ns: m.created_at_ns,
      updated_at_ns: m.updated_at_ns,
    };
    writeMemberLine(out.members, rec);
    out.members.endLine();
  }
  for (const s of c.systemUids) {
    const rec: SystemUidRecord = { node_id: s.node_id, shard: s.shard, uid: s.uid };
    out.system_uids.write(rec);
  }
  const conv = writeConversations(c, { ...ctx, out: out.conversations, excluded: out.excluded });
  for (const [ch, t] of c.tails) {
    if (t.channel_id === undefined) {
      const known = c.dictionary.get(ch);
      const id = known ? c.v3(known.id, known.type, { shard: t.shard }) : undefined;
      if (!known || id === undefined) {
        if (t.last_seq > 0)
          f.block({
            code: 'unresolved_channel_tail',
            detail: `last-seq ${t.last_seq} under channel hash ${ch} that no known channel has`,
            node_id: t.node_id,
            shard: t.shard,
          });
        continue;
      }
      t.channel_id = id;
      t.v2_channel_id = known.id;
      t.channel_type = known.type;
    }
    if (t.clipped > 0) {
      f.warn({
        code: 'rows_above_tail',
        detail: `${t.clipped} message rows above last-seq ${t.last_seq}; v2 never shows them, they are not carried`,
        node_id: t.node_id,
        shard: t.shard,
        channel_id: t.v2_channel_id,
        channel_type: t.channel_type,
      });
    }
    const rec: TailRecord = {
      node_id: t.node_id,
      shard: t.shard,
      channel_id: t.channel_id,
      v2_channel_id: t.v2_channel_id!,
      channel_type: t.channel_type!,
      last_seq: t.last_seq,
      set_time_ns: t.set_time_ns,
      messages: t.messages,
      clipped: t.clipped,
    };
    out.tails.write(rec);
  }
  const archivedOnly: Array<[string, string]> = [
    ['archived_notify_queue', 'pending webhook notifications (queue not drained); archived, not delivered by v3'],
    ['archived_plugin', 'plugin rows; v3 has no plugin host, archived only'],
    ['archived_plugin_user', 'plugin-user bindings; archived only'],
    ['archived_message_event_state', 'stream event projections; archived only (the messages themselves are carried)'],
  ];
  for (const [k, detail] of archivedOnly) {
    if ((c.counts[k] ?? 0) > 0) f.warn({ code: k.replace('archived_', 'archived_only_'), detail: `${c.counts[k]} ${detail}` });
  }
  return conv;
}
