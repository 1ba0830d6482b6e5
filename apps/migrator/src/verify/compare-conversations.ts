import { personParticipants } from '@parley/shared';
import { readJsonl } from '../archive/jsonl.ts';
import { missingIdentity, type Policy } from '../policy.ts';
import { recordPath } from '../stages/records-dir.ts';
import type { ConversationRecord, MemberRecord, TailRecord } from '../v2/records.ts';
import type { Row } from '@parley/store';
import { CMD, mk, type Checker } from './compare.ts';
import type { Positions } from './positions.ts';

const ms = (ns: string) => Number(BigInt(ns) / 1_000_000n);

interface Known {
  positions: Positions;
  /** Target tail per `type\0channel`. */
  tails: Map<string, number>;
  /** Live subscribers, `mk` keys. */
  live: Set<string>;
  /** Highest target seq each sender sent per channel, `mk` keys. */
  lastSend: Map<string, number>;
  subscribers: MemberRecord[];
}

interface Expected {
  read: number;
  deleted: number;
  unread: number;
  activated: number;
  updatedNs: bigint;
}

/**
 * Conversations and memberships as verify expects them from the archive and
 * the plan: command conversations are command bindings (never memberships),
 * chat conversations carry mapped positions and are activated only where v2
 * lists them, live members without a conversation are hidden up to the tail
 * unless `missing_conversations[]` keeps them visible.
 */
export async function compareConversations(c: Checker, records: string, policy: Policy, k: Known): Promise<void> {
  const tailOf = (type: number, id: string) => k.tails.get(`${type}\u0000${id}`) ?? 0;
  const expected = new Map<string, Expected>();
  const byUid = new Map<string, string[]>();
  let bindings = 0;
  const cmdRows = new Map<string, Row<'cmd_bindings'>>();
  for await (const page of c.snapshot.scan('cmd_bindings'))
    for (const r of page) cmdRows.set(`${r.uid}\u0000${r.channel_id}\u0000${r.channel_type}`, r);
  for (const cv of readJsonl<ConversationRecord>(recordPath(records, 'conversations'))) {
    const key = `${cv.channel_type}/${cv.channel_id}/${cv.uid}`;
    if (cv.type === 1 || cv.channel_id.endsWith(CMD)) {
      bindings++;
      const r = cmdRows.get(`${cv.uid}\u0000${cv.channel_id}\u0000${cv.channel_type}`);
      if (!r) {
        c.miss({ table: 'cmd_bindings', key, field: 'command conversation', expected: 'present', actual: 'missing' });
        continue;
      }
      c.eq('cmd_bindings', key, 'start_seq', 1, r.start_seq);
      c.eq(
        'cmd_bindings',
        key,
        'ack_seq (v2 read position)',
        k.positions.position(cv.channel_type, cv.channel_id, cv.readed_to_msg_seq),
        r.ack_seq,
      );
      c.eq('cmd_bindings', key, 'removed', 0, r.removed);
      continue;
    }
    const deleted = k.positions.position(cv.channel_type, cv.channel_id, cv.deleted_at_msg_seq);
    const listed = tailOf(cv.channel_type, cv.channel_id) > deleted;
    const id = mk(cv.channel_type, cv.channel_id, cv.uid);
    expected.set(id, {
      read: k.positions.position(cv.channel_type, cv.channel_id, cv.readed_to_msg_seq),
      deleted,
      unread: policy.deriveUnread ? 0 : cv.unread_count,
      activated: listed ? Math.max(1, ms(cv.updated_at_ns) || ms(cv.created_at_ns)) : 0,
      updatedNs: BigInt(cv.updated_at_ns),
    });
    byUid.set(cv.uid, [...(byUid.get(cv.uid) ?? []), id]);
  }
  await c.count('cmd_bindings', bindings);
  if (!policy.preserveAll) {
    for (const ids of byUid.values()) {
      if (ids.length <= policy.listLimit) continue;
      const order = ids.map((id) => ({ id, at: expected.get(id)!.updatedNs }));
      order.sort((a, b) => (a.at === b.at ? 0 : a.at === 0n ? 1 : b.at === 0n ? -1 : a.at > b.at ? -1 : 1));
      for (const { id } of order.slice(policy.listLimit)) {
        const e = expected.get(id)!;
        const [type, channel] = id.split('\u0000');
        e.activated = 0;
        e.deleted = Math.max(e.deleted, tailOf(Number(type), channel!));
      }
    }
  }

  const members = new Set<string>([...k.live, ...expected.keys()]);
  for (const t of readJsonl<TailRecord>(recordPath(records, 'tails'))) {
    if (t.channel_type !== 1 || t.channel_id.endsWith(CMD) || t.messages === 0) continue;
    for (const uid of personParticipants(t.channel_id) ?? []) {
      const id = mk(t.channel_type, t.channel_id, uid);
      members.add(id);
      k.live.add(id);
    }
  }
  for (const id of expected.keys()) if (id.startsWith('1\u0000')) k.live.add(id);
  await c.count('memberships', members.size);
  const present = new Set<string>();
  for await (const page of c.snapshot.scan('memberships'))
    for (const r of page) {
      const type = Number(r.channel_type);
      const channel = String(r.channel_id);
      const key = `${type}/${channel}/${String(r.uid)}`;
      const id = mk(type, channel, String(r.uid));
      present.add(id);
      if (channel.endsWith(CMD))
        c.miss({
          table: 'memberships',
          key,
          field: 'command log membership',
          expected: 'none (command conversations are bindings)',
          actual: 'present',
        });
      if (k.live.has(id)) c.eq('memberships', key, 'removed (subscriber or chat participant)', 0, r.removed);
      c.eq('memberships', key, 'last_send_seq', k.lastSend.get(id) ?? 0, r.last_send_seq);
      c.eq('memberships', key, 'join_seq', 1, r.join_seq);
      const e = expected.get(id);
      if (e) {
        c.eq('memberships', key, 'read_seq', e.read, r.read_seq);
        c.eq('memberships', key, 'deleted_to_seq', e.deleted, r.deleted_to_seq);
        c.eq('memberships', key, 'unread_count', e.unread, r.unread_count);
        c.eq('memberships', key, 'activated_at', e.activated, r.activated_at);
        continue;
      }
      c.eq('memberships', key, 'activated_at (no conversation)', 0, r.activated_at);
      const tail = tailOf(type, channel);
      let hidden = Number(r.removed) === 0 && tail > 0;
      if (hidden) {
        const m = missingIdentity(String(r.uid), channel, type, tail);
        const entry = policy.missing.get(`${m.uid_sha256} ${m.channel_sha256}`);
        if (entry && !entry.hidden) hidden = false;
      }
      c.eq('memberships', key, 'deleted_to_seq (no conversation: hidden until a new message)', hidden ? tail : 0, r.deleted_to_seq);
    }
  for (const m of k.subscribers) {
    if (!present.has(mk(m.channel_type, m.channel_id, m.uid))) {
      c.miss({
        table: 'memberships',
        key: `${m.channel_type}/${m.channel_id}/${m.uid}`,
        field: 'subscriber',
        expected: 'present',
        actual: 'missing',
      });
    }
  }
}
