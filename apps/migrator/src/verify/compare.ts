import { createHash } from 'node:crypto';
import type Database from 'better-sqlite3';
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

export type Row = Record<string, unknown>;

export const CMD = '____cmd';
export const mk = (type: number, channelId: string, uid: string) => `${type}\u0000${channelId}\u0000${uid}`;
const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/** The comparison's shared state: the target, its findings and what is counted. */
export interface Checker {
  db: Database.Database;
  miss(m: Mismatch): void;
  eq(table: string, key: string, field: string, expected: unknown, actual: unknown): void;
  count(table: string, expected: number): void;
  one(sql: string, ...args: unknown[]): Row | undefined;
}

/**
 * Compares one target store with the archive's records, field by field,
 * written independently of the import code: every expected value is computed
 * here from the v2 record and the plan's policy, every actual value read back
 * from the store. Row counts must match too (nothing missing, nothing extra).
 */
export function compareTarget(
  db: Database.Database,
  records: string,
  policy: Policy,
  limit = 100,
): { mismatches: Mismatch[]; checked: Record<string, number> } {
  const mismatches: Mismatch[] = [];
  const checked: Record<string, number> = {};
  const c: Checker = {
    db,
    miss: (m) => {
      if (mismatches.length < limit) mismatches.push(m);
    },
    eq: (table, key, field, expected, actual) => {
      checked[table] = (checked[table] ?? 0) + 1;
      if (String(expected) !== String(actual)) c.miss({ table, key, field, expected: String(expected), actual: String(actual) });
    },
    count: (table, expected) => {
      const n = Number((db.prepare(`select count(*) as n from ${table}`).get() as { n: number }).n);
      c.eq(table, '*', 'row count', expected, n);
    },
    one: (sql, ...args) => db.prepare(sql).get(...args) as Row | undefined,
  };

  const devices = new Map<string, CredentialRecord>();
  for (const d of readJsonl<CredentialRecord>(recordPath(records, 'credentials'))) {
    const k = `${d.uid}/${d.device_flag}`;
    const p = devices.get(k);
    if (!p || BigInt(d.v2_device_id) < BigInt(p.v2_device_id)) devices.set(k, d);
  }
  const devStmt = db.prepare('select * from devices where uid = ? and device_flag = ?');
  for (const [k, d] of devices) {
    const r = devStmt.get(d.uid, d.device_flag) as Row | undefined;
    if (!r) {
      c.miss({ table: 'devices', key: k, field: 'row', expected: 'present', actual: 'missing' });
      continue;
    }
    c.eq('devices', k, 'device_level', d.device_level, r.device_level);
    c.eq('devices', k, 'token_sha256', d.token === '' ? '' : sha(d.token), r.token_sha256);
  }
  c.count('devices', devices.size);

  let channels = 0;
  for (const ch of readJsonl<ChannelRecord>(recordPath(records, 'channels'))) {
    channels++;
    const k = `${ch.channel_type}/${ch.channel_id}`;
    const r = c.one('select * from channels where channel_id = ? and channel_type = ?', ch.channel_id, ch.channel_type);
    if (!r) {
      c.miss({ table: 'channels', key: k, field: 'row', expected: 'present', actual: 'missing' });
      continue;
    }
    for (const f of ['ban', 'disband', 'large', 'send_ban', 'allow_stranger'] as const) c.eq('channels', k, f, ch[f] ? 1 : 0, r[f]);
  }
  c.count('channels', channels);

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
    const r = c.one(
      'select 1 as x from member_lists where channel_id = ? and channel_type = ? and list = ? and uid = ?',
      m.channel_id,
      m.channel_type,
      m.list,
      m.uid,
    );
    c.eq('member_lists', k, m.list, 'present', r ? 'present' : 'missing');
  }
  c.count('member_lists', lists);

  let sys = 0;
  for (const s of readJsonl<SystemUidRecord>(recordPath(records, 'system_uids'))) {
    sys++;
    c.eq('system_uids', s.uid, 'uid', 'present', c.one('select 1 as x from system_uids where uid = ?', s.uid) ? 'present' : 'missing');
  }
  c.count('system_uids', sys);

  // without renumbering every seq is its own: no extra pass over the messages
  const positions = Positions.fromMessages(
    policy.compactSequences ? readJsonl<MessageRecord>(recordPath(records, 'messages')) : [],
    policy.compactSequences,
  );
  const target = new ChannelCursor(db);
  const lastSend = new Map<string, number>();
  let messages = 0;
  for (const m of readJsonl<MessageRecord>(recordPath(records, 'messages'))) {
    messages++;
    const seq = positions.targetSeq(m.channel_type, m.channel_id, m.message_seq);
    const k = `${m.channel_type}/${m.channel_id}/${m.message_seq}→${seq}`;
    const r = target.at(m.channel_id, m.channel_type, seq);
    if (!r) {
      c.miss({ table: 'messages', key: k, field: 'row', expected: 'present', actual: 'missing' });
      continue;
    }
    c.eq('messages', k, 'message_id', m.message_id, r.id);
    c.eq('messages', k, 'client_msg_no', m.client_msg_no, r.client_msg_no);
    c.eq('messages', k, 'from_uid', m.from_uid, r.from_uid);
    c.eq('messages', k, 'setting', m.setting, r.setting);
    c.eq('messages', k, 'red_dot/no_persist/sync_once', m.header & 7, r.flags);
    c.eq('messages', k, 'expire', m.expire, r.expire);
    c.eq('messages', k, 'topic', m.topic, r.topic);
    c.eq('messages', k, 'timestamp', m.timestamp, Math.floor(Number(r.created_at) / 1000));
    c.eq('messages', k, 'payload', m.payload, Buffer.from(r.payload as Uint8Array).toString('base64'));
    if (m.from_uid !== '' && !m.channel_id.endsWith(CMD)) {
      const lk = mk(m.channel_type, m.channel_id, m.from_uid);
      lastSend.set(lk, Math.max(lastSend.get(lk) ?? 0, seq));
    }
  }
  target.close();
  c.count('messages', messages);
  // every message id is carried once (one query over the id index, not one per message)
  const reused = db
    .prepare('select cast(message_id as text) as id, count(*) as n from messages group by message_id having count(*) > 1 limit 5')
    .all() as Array<{ id: string; n: number }>;
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
    const r = c.one('select tail_seq from channel_log where channel_id = ? and channel_type = ?', t.channel_id, t.channel_type);
    if (tail > 0) logs++;
    c.eq('channel_log', k, 'tail_seq (commit boundary)', tail > 0 ? tail : 'missing', r?.tail_seq ?? 'missing');
    const max = c.one(
      'select max(message_seq) as s, count(*) as n from messages where channel_id = ? and channel_type = ?',
      t.channel_id,
      t.channel_type,
    );
    c.eq('channel_log', k, 'retained messages', t.messages, max?.n ?? 0);
    if (Number(max?.s ?? 0) > tail)
      c.miss({ table: 'messages', key: k, field: 'seq above tail', expected: `<= ${tail}`, actual: String(max?.s) });
  }
  c.count('channel_log', logs);

  compareConversations(c, records, policy, { positions, tails, live, lastSend, subscribers });
  if (policy.compactSequences) {
    // the archive's mapping, written at prepare, against the target: every retained row at its target seq
    const at = db.prepare(
      'select cast(message_id as text) as id from messages where channel_id = ? and channel_type = ? and message_seq = ?',
    );
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
          (at.get(m.channel_id, m.channel_type, m.target_seq) as { id: string } | undefined)?.id ?? 'missing',
        );
      c.eq('sequence_mapping', k, 'boundary_seq', positions.position(m.channel_type, m.channel_id, m.v2_seq), m.boundary_seq);
    }
  }
  return { mismatches, checked };
}

/**
 * The target's messages read channel by channel in seq order, in step with
 * the archive's (whose channels come one after another, each in seq order):
 * one query per channel instead of one per message. Any order still works,
 * a channel met again is read again from its start.
 */
class ChannelCursor {
  private readonly stmt: Database.Statement;
  private key = '';
  private it: Iterator<Row> | undefined;
  private pending: Row | undefined;

  constructor(db: Database.Database) {
    this.stmt = db.prepare(
      'select cast(message_id as text) as id, * from messages where channel_id = ? and channel_type = ? order by message_seq',
    );
  }

  at(channelId: string, channelType: number, seq: number): Row | undefined {
    const key = `${channelType}\u0000${channelId}`;
    if (key !== this.key || (this.pending !== undefined && Number(this.pending.message_seq) > seq)) {
      this.close();
      this.key = key;
      this.it = (this.stmt.iterate(channelId, channelType) as IterableIterator<Row>)[Symbol.iterator]();
      this.pending = this.next();
    }
    while (this.pending !== undefined && Number(this.pending.message_seq) < seq) this.pending = this.next();
    if (this.pending === undefined || Number(this.pending.message_seq) !== seq) return undefined;
    const r = this.pending;
    this.pending = this.next();
    return r;
  }

  private next(): Row | undefined {
    const n = this.it?.next();
    return n && !n.done ? n.value : undefined;
  }

  close(): void {
    this.it?.return?.();
    this.it = undefined;
    this.pending = undefined;
    this.key = '';
  }
}
