import { createHash } from 'node:crypto';
import type Database from 'better-sqlite3';
import { readJsonl } from '../archive/jsonl.ts';
import { recordPath } from '../stages/records-dir.ts';
import type {
  ChannelRecord, ConversationRecord, CredentialRecord, MemberRecord, MessageRecord, SystemUidRecord, TailRecord,
} from '../v2/records.ts';

/** One difference between the archive and a target. */
export interface Mismatch {
  table: string;
  key: string;
  field: string;
  expected: string;
  actual: string;
}

type Row = Record<string, unknown>;

const ms = (ns: string) => Number(BigInt(ns) / 1_000_000n);
const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
const CMD = '____cmd';
const mk = (type: number, channelId: string, uid: string) => `${type}\u0000${channelId}\u0000${uid}`;

/**
 * Compares one target store with the archive's records, field by field,
 * written independently of the import code: every expected value is computed
 * here from the v2 record, every actual value read back from the store.
 * Row counts must match too (nothing missing, nothing extra).
 */
export function compareTarget(db: Database.Database, records: string, limit = 100): { mismatches: Mismatch[]; checked: Record<string, number> } {
  const mismatches: Mismatch[] = [];
  const checked: Record<string, number> = {};
  const miss = (m: Mismatch) => {
    if (mismatches.length < limit) mismatches.push(m);
  };
  const eq = (table: string, key: string, field: string, expected: unknown, actual: unknown) => {
    checked[table] = (checked[table] ?? 0) + 1;
    if (String(expected) !== String(actual)) miss({ table, key, field, expected: String(expected), actual: String(actual) });
  };
  const count = (table: string, expected: number) => {
    const n = Number((db.prepare(`select count(*) as n from ${table}`).get() as { n: number }).n);
    eq(table, '*', 'row count', expected, n);
  };
  const one = (sql: string, ...args: unknown[]) => db.prepare(sql).get(...args) as Row | undefined;

  const devices = new Map<string, CredentialRecord>();
  for (const d of readJsonl<CredentialRecord>(recordPath(records, 'credentials'))) {
    const k = `${d.uid}/${d.device_flag}`;
    const p = devices.get(k);
    if (!p || BigInt(d.v2_device_id) < BigInt(p.v2_device_id)) devices.set(k, d);
  }
  const devStmt = db.prepare('select * from devices where uid = ? and device_flag = ?');
  for (const [k, d] of devices) {
    const r = devStmt.get(d.uid, d.device_flag) as Row | undefined;
    if (!r) { miss({ table: 'devices', key: k, field: 'row', expected: 'present', actual: 'missing' }); continue; }
    eq('devices', k, 'device_level', d.device_level, r.device_level);
    eq('devices', k, 'token_sha256', d.token === '' ? '' : sha(d.token), r.token_sha256);
  }
  count('devices', devices.size);

  let channels = 0;
  for (const c of readJsonl<ChannelRecord>(recordPath(records, 'channels'))) {
    channels++;
    const k = `${c.channel_type}/${c.channel_id}`;
    const r = one('select * from channels where channel_id = ? and channel_type = ?', c.channel_id, c.channel_type);
    if (!r) { miss({ table: 'channels', key: k, field: 'row', expected: 'present', actual: 'missing' }); continue; }
    for (const f of ['ban', 'disband', 'large', 'send_ban', 'allow_stranger'] as const) eq('channels', k, f, c[f] ? 1 : 0, r[f]);
  }
  count('channels', channels);

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
    const r = one('select 1 as x from member_lists where channel_id = ? and channel_type = ? and list = ? and uid = ?', m.channel_id, m.channel_type, m.list, m.uid);
    eq('member_lists', k, m.list, 'present', r ? 'present' : 'missing');
  }
  count('member_lists', lists);

  let sys = 0;
  for (const s of readJsonl<SystemUidRecord>(recordPath(records, 'system_uids'))) {
    sys++;
    eq('system_uids', s.uid, 'uid', 'present', one('select 1 as x from system_uids where uid = ?', s.uid) ? 'present' : 'missing');
  }
  count('system_uids', sys);

  const msgStmt = db.prepare('select cast(message_id as text) as id, * from messages where channel_id = ? and channel_type = ? and message_seq = ?');
  const byId = db.prepare('select count(*) as n from messages where message_id = ?');
  const lastSend = new Map<string, number>();
  let messages = 0;
  for (const m of readJsonl<MessageRecord>(recordPath(records, 'messages'))) {
    messages++;
    const k = `${m.channel_type}/${m.channel_id}/${m.message_seq}`;
    const r = msgStmt.get(m.channel_id, m.channel_type, m.message_seq) as Row | undefined;
    if (!r) { miss({ table: 'messages', key: k, field: 'row', expected: 'present', actual: 'missing' }); continue; }
    eq('messages', k, 'message_id', m.message_id, r.id);
    eq('messages', k, 'client_msg_no', m.client_msg_no, r.client_msg_no);
    eq('messages', k, 'from_uid', m.from_uid, r.from_uid);
    eq('messages', k, 'setting', m.setting, r.setting);
    eq('messages', k, 'red_dot/no_persist/sync_once', m.header & 7, r.flags);
    eq('messages', k, 'expire', m.expire, r.expire);
    eq('messages', k, 'topic', m.topic, r.topic);
    eq('messages', k, 'timestamp', m.timestamp, Math.floor(Number(r.created_at) / 1000));
    eq('messages', k, 'payload', m.payload, Buffer.from(r.payload as Uint8Array).toString('base64'));
    eq('messages', k, 'message_id index (unique hit)', 1, (byId.get(BigInt(m.message_id)) as { n: number }).n);
    if (m.from_uid !== '' && !m.channel_id.endsWith(CMD)) {
      const lk = mk(m.channel_type, m.channel_id, m.from_uid);
      lastSend.set(lk, Math.max(lastSend.get(lk) ?? 0, m.message_seq));
    }
  }
  count('messages', messages);

  let tails = 0;
  for (const t of readJsonl<TailRecord>(recordPath(records, 'tails'))) {
    tails++;
    const k = `${t.channel_type}/${t.channel_id}`;
    const r = one('select tail_seq from channel_log where channel_id = ? and channel_type = ?', t.channel_id, t.channel_type);
    eq('channel_log', k, 'tail_seq (commit boundary)', t.last_seq, r?.tail_seq ?? 'missing');
    const max = one('select max(message_seq) as s, count(*) as n from messages where channel_id = ? and channel_type = ?', t.channel_id, t.channel_type);
    eq('channel_log', k, 'retained messages', t.messages, max?.n ?? 0);
    if (Number(max?.s ?? 0) > t.last_seq) miss({ table: 'messages', key: k, field: 'seq above tail', expected: `<= ${t.last_seq}`, actual: String(max?.s) });
  }
  count('channel_log', tails);

  const convs = new Set<string>();
  for (const c of readJsonl<ConversationRecord>(recordPath(records, 'conversations'))) {
    const k = `${c.channel_type}/${c.channel_id}/${c.uid}`;
    convs.add(mk(c.channel_type, c.channel_id, c.uid));
    const r = one('select * from memberships where channel_id = ? and channel_type = ? and uid = ?', c.channel_id, c.channel_type, c.uid);
    if (!r) { miss({ table: 'memberships', key: k, field: 'conversation', expected: 'present', actual: 'missing' }); continue; }
    eq('memberships', k, 'read_seq', c.readed_to_msg_seq, r.read_seq);
    eq('memberships', k, 'deleted_to_seq', c.deleted_at_msg_seq, r.deleted_to_seq);
    eq('memberships', k, 'unread_count', c.unread_count, r.unread_count);
    eq('memberships', k, 'activated_at', Math.max(1, ms(c.updated_at_ns) || ms(c.created_at_ns)), r.activated_at);
  }
  for (const r of db.prepare('select * from memberships').iterate() as Iterable<Row>) {
    const k = `${r.channel_type}/${r.channel_id}/${r.uid}`;
    const id = mk(Number(r.channel_type), String(r.channel_id), String(r.uid));
    if (live.has(id)) eq('memberships', k, 'removed (subscriber)', 0, r.removed);
    if (!convs.has(id)) eq('memberships', k, 'activated_at (no conversation)', 0, r.activated_at);
    eq('memberships', k, 'last_send_seq', lastSend.get(id) ?? 0, r.last_send_seq);
    eq('memberships', k, 'join_seq', 1, r.join_seq);
  }
  for (const m of subscribers) {
    if (!one('select 1 as x from memberships where channel_id = ? and channel_type = ? and uid = ?', m.channel_id, m.channel_type, m.uid)) {
      miss({ table: 'memberships', key: `${m.channel_type}/${m.channel_id}/${m.uid}`, field: 'subscriber', expected: 'present', actual: 'missing' });
    }
  }
  return { mismatches, checked };
}
