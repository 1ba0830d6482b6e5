import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import type { ContentTable, Row as StoreRow, SnapshotRepository } from '@parley/store';
import { readJsonl } from '../archive/jsonl.ts';
import type { Policy } from '../policy.ts';
import { recordPath } from '../stages/records-dir.ts';
import type {
  ChannelRecord,
  CredentialRecord,
  MappingRecord,
  MemberRecord,
  MessageRecord,
  SystemUidRecord,
  TailRecord,
} from '../v2/records.ts';
import { compareConversations } from './compare-conversations.ts';
import { Positions } from './positions.ts';

/** One difference between the archive and a target. */
export interface Mismatch {
  table: string;
  key: string;
  field: string;
  expected: string;
  actual: string;
}

export const CMD = '____cmd';
export const mk = (type: number, channelId: string, uid: string) => `${type}\u0000${channelId}\u0000${uid}`;
const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/** The comparison's shared state: the target, its findings and what is counted. */
export interface Checker {
  snapshot: SnapshotRepository;
  miss(m: Mismatch): void;
  eq(table: string, key: string, field: string, expected: unknown, actual: unknown): void;
  count(table: ContentTable, expected: number): Promise<void>;
}

/** Every row of a table of the target, keyed. */
async function keyed<T extends 'devices' | 'channels' | 'member_lists' | 'system_uids' | 'channel_log'>(
  snapshot: SnapshotRepository,
  table: T,
  key: (r: StoreRow<T>) => string,
): Promise<Map<string, StoreRow<T>>> {
  const out = new Map<string, StoreRow<T>>();
  for await (const page of snapshot.scan(table)) for (const r of page) out.set(key(r), r);
  return out;
}

/**
 * Compares one target store with the archive's records, field by field,
 * written independently of the import code: every expected value is computed
 * here from the v2 record and the plan's policy, every actual value read back
 * from the store (whole tables in key order, messages channel by channel).
 * Row counts must match too (nothing missing, nothing extra).
 */
export async function compareTarget(
  snapshot: SnapshotRepository,
  records: string,
  policy: Policy,
  limit = 100,
): Promise<{ mismatches: Mismatch[]; checked: Record<string, number> }> {
  const mismatches: Mismatch[] = [];
  const checked: Record<string, number> = {};
  const c: Checker = {
    snapshot,
    miss: (m) => {
      if (mismatches.length < limit) mismatches.push(m);
    },
    eq: (table, key, field, expected, actual) => {
      checked[table] = (checked[table] ?? 0) + 1;
      if (String(expected) !== String(actual)) c.miss({ table, key, field, expected: String(expected), actual: String(actual) });
    },
    count: async (table, expected) => {
      c.eq(table, '*', 'row count', expected, await snapshot.count(table));
    },
  };
  const targetDevices = await keyed(snapshot, 'devices', (r) => `${r.uid}/${r.device_flag}`);
  const targetChannels = await keyed(snapshot, 'channels', (r) => `${r.channel_type}/${r.channel_id}`);
  const targetLists = await keyed(snapshot, 'member_lists', (r) => `${r.channel_type}/${r.channel_id}/${r.uid}/${r.list}`);
  const targetSystem = await keyed(snapshot, 'system_uids', (r) => r.uid);
  const targetLogs = await keyed(snapshot, 'channel_log', (r) => `${r.channel_type}/${r.channel_id}`);
  const targetStats = new Map((await snapshot.channelStats()).map((s) => [`${s.channel_type}/${s.channel_id}`, s]));

  const devices = new Map<string, CredentialRecord>();
  for (const d of readJsonl<CredentialRecord>(recordPath(records, 'credentials'))) {
    const k = `${d.uid}/${d.device_flag}`;
    const p = devices.get(k);
    if (!p || BigInt(d.v2_device_id) < BigInt(p.v2_device_id)) devices.set(k, d);
  }
  for (const [k, d] of devices) {
    const r = targetDevices.get(k);
    if (!r) {
      c.miss({ table: 'devices', key: k, field: 'row', expected: 'present', actual: 'missing' });
      continue;
    }
    c.eq('devices', k, 'device_level', d.device_level, r.device_level);
    c.eq('devices', k, 'token_sha256', d.token === '' ? '' : sha(d.token), r.token_sha256);
  }
  await c.count('devices', devices.size);

  let channels = 0;
  for (const ch of readJsonl<ChannelRecord>(recordPath(records, 'channels'))) {
    channels++;
    const k = `${ch.channel_type}/${ch.channel_id}`;
    const r = targetChannels.get(k);
    if (!r) {
      c.miss({ table: 'channels', key: k, field: 'row', expected: 'present', actual: 'missing' });
      continue;
    }
    for (const f of ['ban', 'disband', 'large', 'send_ban', 'allow_stranger'] as const) c.eq('channels', k, f, ch[f] ? 1 : 0, r[f]);
  }
  await c.count('channels', channels);

  const live = new Set<string>();
  const subscribers: MemberRecord[] = [];
  let lists = 0;
  for (const m of readJsonl<MemberRecord>(recordPath(records, 'members'))) {
    const k = `${m.channel_type}/${m.channel_id}/${m.uid}`;
    if (m.list === 'subscriber') {
      live.add(mk(m.channel_type, m.channel_id, m.uid));
      subscribers.push(m);
      continue;
    }
    lists++;
    c.eq('member_lists', k, m.list, 'present', targetLists.has(`${k}/${m.list}`) ? 'present' : 'missing');
  }
  await c.count('member_lists', lists);

  let sys = 0;
  for (const s of readJsonl<SystemUidRecord>(recordPath(records, 'system_uids'))) {
    sys++;
    c.eq('system_uids', s.uid, 'uid', 'present', targetSystem.has(s.uid) ? 'present' : 'missing');
  }
  await c.count('system_uids', sys);

  // without renumbering every seq is its own: no extra pass over the messages
  const positions = Positions.fromMessages(
    policy.compactSequences ? readJsonl<MessageRecord>(recordPath(records, 'messages')) : [],
    policy.compactSequences,
  );
  const target = new ChannelCursor(snapshot);
  const lastSend = new Map<string, number>();
  let messages = 0;
  for (const m of readJsonl<MessageRecord>(recordPath(records, 'messages'))) {
    messages++;
    const seq = positions.targetSeq(m.channel_type, m.channel_id, m.message_seq);
    const k = `${m.channel_type}/${m.channel_id}/${m.message_seq}→${seq}`;
    const r = await target.at(m.channel_id, m.channel_type, seq);
    if (!r) {
      c.miss({ table: 'messages', key: k, field: 'row', expected: 'present', actual: 'missing' });
      continue;
    }
    c.eq('messages', k, 'message_id', m.message_id, r.message_id);
    c.eq('messages', k, 'client_msg_no', m.client_msg_no, r.client_msg_no);
    c.eq('messages', k, 'from_uid', m.from_uid, r.from_uid);
    c.eq('messages', k, 'setting', m.setting, r.setting);
    c.eq('messages', k, 'red_dot/no_persist/sync_once', m.header & 7, r.flags);
    c.eq('messages', k, 'expire', m.expire, r.expire);
    c.eq('messages', k, 'topic', m.topic, r.topic);
    c.eq('messages', k, 'timestamp', m.timestamp, Math.floor(Number(r.created_at) / 1000));
    c.eq('messages', k, 'payload', m.payload, Buffer.from(r.payload).toString('base64'));
    if (m.from_uid !== '' && !m.channel_id.endsWith(CMD)) {
      const lk = mk(m.channel_type, m.channel_id, m.from_uid);
      lastSend.set(lk, Math.max(lastSend.get(lk) ?? 0, seq));
    }
  }
  target.close();
  await c.count('messages', messages);
  // every message id is carried once (one query over the id index, not one per message)
  const reused = await snapshot.repeatedMessageIds(5);
  c.eq(
    'messages',
    '*',
    'message ids used more than once (id index)',
    'none',
    reused.length === 0 ? 'none' : reused.map((r) => `${r.id}×${r.n}`).join(', '),
  );

  const tails = new Map<string, number>();
  let logs = 0;
  for (const t of readJsonl<TailRecord>(recordPath(records, 'tails'))) {
    const k = `${t.channel_type}/${t.channel_id}`;
    const tail = positions.position(t.channel_type, t.channel_id, t.last_seq);
    tails.set(`${t.channel_type}\u0000${t.channel_id}`, tail);
    const r = targetLogs.get(k);
    if (tail > 0) logs++;
    c.eq('channel_log', k, 'tail_seq (commit boundary)', tail > 0 ? tail : 'missing', r?.tail_seq ?? 'missing');
    const max = targetStats.get(k);
    c.eq('channel_log', k, 'retained messages', t.messages, max?.messages ?? 0);
    if ((max?.max_seq ?? 0) > tail)
      c.miss({ table: 'messages', key: k, field: 'seq above tail', expected: `<= ${tail}`, actual: String(max?.max_seq) });
  }
  await c.count('channel_log', logs);

  await compareConversations(c, records, policy, { positions, tails, live, lastSend, subscribers });
  if (policy.compactSequences) {
    // the archive's mapping, written at prepare, against the target: every retained row at its target seq
    const at = new ChannelCursor(snapshot);
    for (const m of readJsonl<MappingRecord>(recordPath(records, 'sequence_mapping'))) {
      const k = `${m.channel_type}/${m.channel_id}/${m.v2_seq}`;
      c.eq(
        'sequence_mapping',
        k,
        'target_seq (own count)',
        positions.targetSeq(m.channel_type, m.channel_id, m.v2_seq) === m.target_seq || m.target_seq === 0
          ? 'agrees'
          : `own ${positions.targetSeq(m.channel_type, m.channel_id, m.v2_seq)}`,
        'agrees',
      );
      if (m.target_seq > 0)
        c.eq(
          'sequence_mapping',
          k,
          'message_id at target_seq',
          m.message_id,
          (await at.at(m.channel_id, m.channel_type, m.target_seq))?.message_id ?? 'missing',
        );
      c.eq('sequence_mapping', k, 'boundary_seq', positions.position(m.channel_type, m.channel_id, m.v2_seq), m.boundary_seq);
    }
  }
  return { mismatches, checked };
}

/** Messages read per page by the cursor. */
const CURSOR_PAGE = 1024;

/**
 * The target's messages read channel by channel in seq order, in step with
 * the archive's (whose channels come one after another, each in seq order):
 * a page of a channel per query instead of a query per message. Any order
 * still works: a channel met again, or a seq below the page, is read again
 * from its start.
 */
class ChannelCursor {
  private key = '';
  private page: StoreRow<'messages'>[] = [];
  private index = 0;
  /** The page was the channel's last. */
  private done = true;
  /** Every row at or below this seq has been passed. */
  private passed = 0;

  constructor(private readonly snapshot: SnapshotRepository) {}

  async at(channelId: string, channelType: number, seq: number): Promise<StoreRow<'messages'> | undefined> {
    const key = `${channelType}\u0000${channelId}`;
    if (key !== this.key || seq <= this.passed) {
      this.key = key;
      this.passed = 0;
      await this.load(channelId, channelType, 0);
    }
    for (;;) {
      while (this.index < this.page.length && Number(this.page[this.index]!.message_seq) < seq) this.index++;
      if (this.index < this.page.length || this.done) break;
      await this.load(channelId, channelType, Number(this.page.at(-1)!.message_seq));
    }
    this.passed = seq;
    const r = this.page[this.index];
    if (r === undefined || Number(r.message_seq) !== seq) return undefined;
    this.index++;
    return r;
  }

  private async load(channelId: string, channelType: number, afterSeq: number): Promise<void> {
    this.page = await this.snapshot.channelMessages(channelId, channelType, afterSeq, CURSOR_PAGE);
    this.index = 0;
    this.done = this.page.length < CURSOR_PAGE;
  }

  close(): void {
    this.key = '';
    this.page = [];
    this.index = 0;
    this.done = true;
    this.passed = 0;
  }
}
