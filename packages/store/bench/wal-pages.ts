/**
 * What a run of appends leaves in the WAL, by B-tree: its frames, and the distinct pages among
 * them, which are what the next checkpoint copies into the database file (one write each, at
 * scattered offsets, flushed by one fsync). The run appends `messages` one-to-one messages in
 * commits of `batch` rows with the writer thread's statements (one multi-row INSERT into
 * `messages`, one into `pending_marks`) onto a copy of a store filled by bench/writer-cpu.ts,
 * with no checkpoint, then reads the WAL's frame headers and asks `dbstat` which B-tree owns
 * each page. The default is one second of the 1:1 bench at 5k messages/s.
 *
 *   node --import tsx packages/store/bench/wal-pages.ts BASE [messages=5000] [batch=28] [channels=500]
 *
 * BASE: the folder holding the filled store (`<dir>/base` of writer-cpu.ts, e.g.
 * `OUT/store/base` after bench/writer-switches.sh OUT); it is copied, not changed.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { STORE_FILE } from '../src/index.ts';
import { idemHash } from '../src/sqlite/idem-hash.ts';

const base = process.argv[2];
if (!base) throw new Error('usage: wal-pages.ts BASE [messages=5000] [batch=28] [channels=500]');
const total = Number(process.argv[3] ?? 5_000);
const batch = Number(process.argv[4] ?? 28);
const channels = Number(process.argv[5] ?? 500);
const commits = Math.ceil(total / batch);
/** WAL file header and frame header sizes, bytes (SQLite's file format). */
const WAL_HEADER = 32;
const FRAME_HEADER = 24;

const dir = mkdtempSync(join(tmpdir(), 'parley-wal-pages-'));
try {
  cpSync(join(base, STORE_FILE), join(dir, STORE_FILE));
  const file = join(dir, STORE_FILE);
  const db = new SqliteDatabase(file, { fileMustExist: true });
  db.pragma('journal_mode = WAL');
  db.pragma('wal_autocheckpoint = 0');
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -4000');
  // The load of writer-cpu.ts, continued: channel `(n × 7919) mod channels`, one sender each.
  const seqs = new Map(
    db.prepare('select channel_id, max(message_seq) from messages group by channel_id').raw().all() as [string, number][],
  );
  let n = db.prepare('select count(*) from messages').pluck().get() as number;
  const rows = (count: number, values: string) => Array.from({ length: count }, () => values).join(', ');
  const insert = db.prepare(
    `insert or rollback into messages (channel_id, channel_type, message_seq, message_id, client_msg_no, from_uid, setting, flags, expire, topic, created_at, payload, idem_hash)
     values ${rows(batch, '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')}`,
  );
  const mark = db.prepare(`insert into pending_marks (channel_id, channel_type, uid, seq) values ${rows(batch, '(?, ?, ?, ?)')}`);
  const payload = Buffer.from(JSON.stringify({ b: 'x'.repeat(40) }));
  const commit = db.transaction(() => {
    const values: unknown[] = [];
    const marks: unknown[] = [];
    for (let k = 0; k < batch; k++, n++) {
      const c = (n * 7919) % channels;
      const channel = `u${c}@v${c}`;
      const uid = `u${c}`;
      const clientMsgNo = `${uid}-${n}`;
      const seq = (seqs.get(channel) ?? 0) + 1;
      seqs.set(channel, seq);
      values.push(channel, 1, seq, (1n << 40n) + BigInt(n), clientMsgNo, uid, 0, 2, 0, '', 1_700_000_000_000 + n, payload);
      values.push(idemHash(channel, 1, uid, clientMsgNo));
      marks.push(channel, 1, uid, seq);
    }
    insert.run(...values);
    mark.run(...marks);
  });
  for (let i = 0; i < commits; i++) commit.immediate();

  const wal = readFileSync(`${file}-wal`);
  const pageSize = wal.readUInt32BE(8);
  const frames: number[] = [];
  for (let at = WAL_HEADER; at + FRAME_HEADER + pageSize <= wal.length; at += FRAME_HEADER + pageSize) frames.push(wal.readUInt32BE(at));
  const owner = new Map(db.prepare('select pageno, name from dbstat').raw().all() as [number, string][]);
  db.close();

  const trees = new Map<string, { frames: number; pages: Set<number> }>();
  for (const page of frames) {
    const name = page === 1 ? 'page 1 (header)' : (owner.get(page) ?? '(free)');
    const tree = trees.get(name) ?? { frames: 0, pages: new Set<number>() };
    tree.frames++;
    tree.pages.add(page);
    trees.set(name, tree);
  }
  const messages = commits * batch;
  console.log(
    `${messages} messages in ${commits} commits of ${batch}: ${frames.length} frames (${(frames.length / messages).toFixed(2)} per message), ` +
      `${new Set(frames).size} distinct pages of ${pageSize} bytes`,
  );
  for (const [name, tree] of [...trees].sort((a, b) => b[1].frames - a[1].frames)) {
    console.log(
      `  ${name.padEnd(30)} frames ${String(tree.frames).padStart(6)} (${(tree.frames / messages).toFixed(2)} per message), distinct pages ${String(tree.pages.size).padStart(5)}`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
