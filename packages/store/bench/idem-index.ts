/**
 * The embedded store's idempotency index, before and after `0005_sqlite_idem_hash`:
 * the writer thread's statements (look-up of every key, one multi-row INSERT,
 * the latest-send marks) in one transaction per batch, on a store already
 * holding `prefill` messages, once with the four-column index of the schema
 * before 0005 (`old`, the statements the writer ran then) and once with the
 * hash index (`new`, the writer's current statements and FNV-1a hash; `sha`, the
 * same with the first 8 bytes of SHA-256 as the hash, the alternative measured). Counts the WAL
 * frames every batch writes (no checkpoint runs meanwhile) and the CPU time.
 * 1:1-shaped load: many channels, one sender each, a random 32-hex client_msg_no
 * per message.
 *
 *   node --conditions=@parley/source --import tsx packages/store/bench/idem-index.ts \
 *     [prefill=100000] [messages=20000] [batch=16] [variants=old,new,old,new] [dir]
 *
 * With `dir`, the stores are made once in it (`<dir>/<variant>.db`, kept) and each
 * run appends to a copy: for instruction counts under callgrind, run once per
 * variant with two `messages` values and take the difference.
 */
import { copyFileSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect } from 'kysely';
import { migrationProvider } from '../src/migrations.ts';
import { hash as digest } from 'node:crypto';
import { idemHash, type IdemHashFn } from '../src/sqlite/idem-hash.ts';
import { IDEMPOTENCY_LOOKUP_SQL } from '../src/sqlite/writer-protocol.ts';

type Variant = 'old' | 'new' | 'sha';
const prefill = Number(process.argv[2] ?? 100_000);
const total = Number(process.argv[3] ?? 20_000);
const batch = Number(process.argv[4] ?? 16);
const variants = (process.argv[5] ?? 'old,new,old,new').split(',') as Variant[];
const keep = process.argv[6];
const dir = keep ?? mkdtempSync(join(tmpdir(), 'parley-idem-bench-'));
const CHANNELS = 10_000;
const PAGE = 1024;
const FRAME = 24 + PAGE;
const payload = Buffer.from(JSON.stringify({ type: 1, content: 'hello, this is a benchmark message' }));

/** The alternative to `idemHash` that was measured: the first 8 bytes of SHA-256 over a length-prefixed text. */
const sha256Hash: IdemHashFn = (channelId, channelType, fromUid, clientMsgNo) =>
  BigInt.asIntN(
    64,
    BigInt(
      `0x${digest('sha256', `${channelType}:${channelId.length}:${channelId}${fromUid.length}:${fromUid}${clientMsgNo.length}:${clientMsgNo}`).slice(0, 16)}`,
    ),
  );

/** A reproducible 32-hex client_msg_no stream (xorshift). */
function keys(seed: number) {
  let s = seed >>> 0 || 1;
  const word = () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0).toString(16).padStart(8, '0');
  };
  return () => word() + word() + word() + word();
}

/** The writer thread's statements for one variant. */
function appender(db: SqliteDatabase.Database, variant: Variant) {
  const cols = variant === 'old' ? 12 : 13;
  const hash = variant === 'sha' ? sha256Hash : idemHash;
  const insert = db.prepare(
    `insert or rollback into messages (channel_id, channel_type, message_seq, message_id, client_msg_no, from_uid, setting, flags, expire, topic, created_at, payload${variant === 'old' ? '' : ', idem_hash'})
     values ${Array.from({ length: batch }, () => `(${Array.from({ length: cols }, () => '?').join(', ')})`).join(', ')}`,
  );
  const lookup = db.prepare(
    variant !== 'old'
      ? IDEMPOTENCY_LOOKUP_SQL
      : `select cast(message_id as text) as id_text, message_seq, payload from messages
     where channel_id = ? and channel_type = ? and from_uid = ? and client_msg_no = ? and client_msg_no <> ''`,
  );
  const mark = db.prepare(
    'update memberships set last_send_seq = ? where channel_id = ? and channel_type = ? and uid = ? and last_send_seq < ?',
  );
  const tx = db.transaction((values: unknown[], marks: unknown[][]) => {
    for (let i = 0; i < values.length; i += cols) {
      const args =
        variant !== 'old'
          ? [values[i + 12], values[i], values[i + 1], values[i + 5], values[i + 4]]
          : [values[i], values[i + 1], values[i + 5], values[i + 4]];
      if (lookup.get(...args)) throw new Error('unexpected idempotency hit');
    }
    insert.run(values);
    for (const m of marks) mark.run(m);
  });
  return (rows: { channel: number; seq: number; id: bigint; clientMsgNo: string }[]) => {
    const values: unknown[] = [];
    const marks: unknown[][] = [];
    for (const r of rows) {
      const channelId = `u${r.channel}@v${r.channel}`;
      const fromUid = `u${r.channel}`;
      values.push(channelId, 1, r.seq, r.id, r.clientMsgNo, fromUid, 0, 2, 0, '', 1_700_000_000_000, payload);
      if (variant !== 'old') values.push(hash(channelId, 1, fromUid, r.clientMsgNo));
      marks.push([r.seq, channelId, 1, fromUid, r.seq]);
    }
    tx.immediate(values, marks);
  };
}

/** Messages `from` .. `from + count` of the load, in batches. */
function* load(from: number, count: number, seqs: number[], nextKey: () => string) {
  let rows: { channel: number; seq: number; id: bigint; clientMsgNo: string }[] = [];
  for (let n = from; n < from + count; n++) {
    // A scattered channel order, as many senders at once give.
    const channel = (n * 7919) % CHANNELS;
    rows.push({ channel, seq: ++seqs[channel]!, id: (1n << 40n) + BigInt(n), clientMsgNo: nextKey() });
    if (rows.length === batch) {
      yield rows;
      rows = [];
    }
  }
}

async function create(variant: Variant): Promise<string> {
  const file = join(dir, `${variant}.db`);
  if (existsSync(file)) return file;
  const raw = new SqliteDatabase(file);
  raw.pragma(`page_size = ${PAGE}`);
  raw.pragma('journal_mode = WAL');
  const kdb = new Kysely<unknown>({ dialect: new SqliteDialect({ database: raw }) });
  const migrator = new Migrator({ db: kdb, provider: migrationProvider('sqlite') });
  const r = variant === 'old' ? await migrator.migrateTo('0004_cluster') : await migrator.migrateToLatest();
  if (r.error) throw r.error;
  const db = new SqliteDatabase(file);
  db.pragma('synchronous = OFF');
  const member = db.prepare(`insert into memberships (channel_id, channel_type, uid, join_seq, updated_at) values (?, 1, ?, 1, 0)`);
  db.transaction(() => {
    for (let c = 0; c < CHANNELS; c++) member.run(`u${c}@v${c}`, `u${c}`);
  })();
  const append = appender(db, variant);
  const seqs = new Array<number>(CHANNELS).fill(0);
  db.transaction(() => {
    for (const rows of load(0, prefill, seqs, keys(1))) append(rows);
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  await kdb.destroy();
  return file;
}

async function run(variant: Variant) {
  const source = await create(variant);
  const file = join(dir, `${variant}-run.db`);
  for (const ext of ['', '-wal', '-shm']) rmSync(file + ext, { force: true });
  copyFileSync(source, file);
  const db = new SqliteDatabase(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('wal_autocheckpoint = 0');
  const seqs = new Array<number>(CHANNELS).fill(0);
  // The prefill's seqs, so the measured messages follow them.
  for (let n = 0; n < prefill; n++) seqs[(n * 7919) % CHANNELS]!++;
  const append = appender(db, variant);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (const rows of load(prefill, total, seqs, keys(2))) append(rows);
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const frames = (statSync(`${file}-wal`).size - 32) / FRAME;
  db.close();
  for (const ext of ['', '-wal', '-shm']) rmSync(file + ext, { force: true });
  return {
    variant,
    prefill,
    messages: total,
    batch,
    wal_frames_per_msg: Number((frames / total).toFixed(3)),
    wal_frames_per_batch: Number((frames / (total / batch)).toFixed(2)),
    cpu_us_per_msg: Number(((cpu.user + cpu.system) / total).toFixed(2)),
    wall_ms: Math.round(ms),
  };
}

for (const v of variants) console.log(JSON.stringify(await run(v)));
if (!keep) rmSync(dir, { recursive: true, force: true });
