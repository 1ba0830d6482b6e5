/**
 * The embedded store's append path as the server drives it, for instruction
 * counts per message: `appendChecked` (the writer thread's idempotency check,
 * one multi-row INSERT, the latest-send marks, `sync=full`) through the real
 * store — the writer and checkpointer threads, the hand-off between them and
 * the main thread — in batches of `batch` one-to-one messages (one sender per
 * channel, one mark per message, a JSON payload from Node's buffer pool, a
 * `<uid>-<n>` client_msg_no as the bench sends), one batch at a time.
 *
 *   npm run build -w @parley/store   # the threads run compiled
 *   node --import tsx packages/store/bench/writer-cpu.ts [prefill=50000] [messages=4000] [batch=10] [channels=500] [dir]
 *
 * The store is filled once in `dir` (`<dir>/base/parley.db`, kept when `dir` is given) and
 * every run appends to a copy. Under callgrind (`--separate-threads=yes`), run with two
 * `messages` values and take the difference per thread: it leaves out start-up, the fill and
 * the warm-up (`WARMUP` messages before the measured ones, every run); `bench/writer-cpu.sh`
 * does that, counting only the measured phase. With `WRITER_BENCH_RATE=N` the batches are handed
 * over at N messages a second instead of as fast as they commit (the warm-up too). Besides the
 * CPU it prints what the process wrote per measured message (`/proc/self/io` on Linux: `wchar`,
 * the bytes of its write calls, the WAL's frames and the checkpoints' pages; `write_bytes`, what
 * reached the block layer).
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { openEmbeddedStore, STORE_FILE, type LastSendMark, type StoredMessage, type WalBufferMode } from '@parley/store';
import { idemHash } from '../src/sqlite/idem-hash.ts';

const prefill = Number(process.argv[2] ?? 50_000);
const total = Number(process.argv[3] ?? 4_000);
const batch = Number(process.argv[4] ?? 10);
const channels = Number(process.argv[5] ?? 500);
const keep = process.argv[6];
const dir = keep ?? mkdtempSync(join(tmpdir(), 'parley-writer-bench-'));
/**
 * Messages appended before the measured ones (`WRITER_BENCH_WARMUP`, default 12,000). The
 * writer thread's JavaScript runs once per batch and does little per call, so V8 optimises it
 * (TurboFan) only after some 500-1,000 batches; with a shorter warm-up part of the measured
 * phase still ran baseline (Sparkplug) code.
 */
const WARMUP = Number(process.env.WRITER_BENCH_WARMUP ?? 12_000);
const body = 'x'.repeat(40);
/**
 * The store's `markApplyMs` (`WRITER_BENCH_MARK_APPLY_MS`; default the store's own, 1000 ms): how
 * often the writer applies the pending latest-send marks. It is wall time: under callgrind, where a
 * run appends about 1,000 messages a second instead of 30,000, a longer one keeps as many
 * messages between applies as a real run has.
 */
const markApplyMs = process.env.WRITER_BENCH_MARK_APPLY_MS === undefined ? undefined : Number(process.env.WRITER_BENCH_MARK_APPLY_MS);
/** Messages a second the batches are handed over at (`WRITER_BENCH_RATE`; 0, the default: as fast as they commit). */
const rate = Number(process.env.WRITER_BENCH_RATE ?? 0);
if (!Number.isFinite(rate) || rate < 0)
  throw new Error(`WRITER_BENCH_RATE must be a number of messages a second, got ${process.env.WRITER_BENCH_RATE}`);
/** The store's `walBuffer` (`WRITER_BENCH_WAL_BUFFER`: auto, on or off; default auto), for alternated runs of both. */
const walBuffer = (process.env.WRITER_BENCH_WAL_BUFFER ?? 'auto') as WalBufferMode;
if (!['auto', 'on', 'off'].includes(walBuffer)) throw new Error(`WRITER_BENCH_WAL_BUFFER must be auto, on or off, got ${walBuffer}`);

const channelOf = (c: number) => `u${c}@v${c}`;
const senderOf = (c: number) => `u${c}`;

/** The n-th message of the load: a scattered channel order, as many senders at once give. */
function message(n: number, seqs: number[]): StoredMessage {
  const c = (n * 7919) % channels;
  return {
    channelId: channelOf(c),
    channelType: 1,
    messageSeq: ++seqs[c]!,
    messageId: (1n << 40n) + BigInt(n),
    clientMsgNo: `${senderOf(c)}-${n}`,
    fromUid: senderOf(c),
    setting: 0,
    flags: 2,
    expire: 0,
    topic: '',
    createdAt: 1_700_000_000_000 + n,
    payload: Buffer.from(JSON.stringify({ b: body })),
  };
}

async function createBase(): Promise<string> {
  const base = join(dir, 'base');
  const file = join(base, STORE_FILE);
  if (existsSync(file)) return base;
  mkdirSync(base, { recursive: true });
  const store = await openEmbeddedStore({ dataDir: base, sync: 'normal' });
  await store.close();
  const db = new SqliteDatabase(file);
  db.pragma('synchronous = OFF');
  const member = db.prepare(`insert into memberships (channel_id, channel_type, uid, join_seq, updated_at) values (?, 1, ?, 1, 0)`);
  const insert = db.prepare(
    `insert into messages (channel_id, channel_type, message_seq, message_id, client_msg_no, from_uid, setting, flags, expire, topic, created_at, payload, idem_hash)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const seqs = new Array<number>(channels).fill(0);
  db.transaction(() => {
    for (let c = 0; c < channels; c++) member.run(channelOf(c), senderOf(c));
    for (let n = 0; n < prefill; n++) {
      const m = message(n, seqs);
      insert.run(
        m.channelId,
        m.channelType,
        m.messageSeq,
        m.messageId,
        m.clientMsgNo,
        m.fromUid,
        m.setting,
        m.flags,
        m.expire,
        m.topic,
        m.createdAt,
        m.payload,
        idemHash(m.channelId, m.channelType, m.fromUid, m.clientMsgNo),
      );
    }
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return base;
}

const base = await createBase();
const run = join(dir, 'run');
rmSync(run, { recursive: true, force: true });
cpSync(base, run, { recursive: true });
const store = await openEmbeddedStore({ dataDir: run, sync: 'full', markApplyMs, walBuffer });
const append = store.messages.appendChecked!;
const seqs = new Array<number>(channels).fill(0);
for (let n = 0; n < prefill; n++) seqs[(n * 7919) % channels]!++;

async function load(from: number, count: number): Promise<void> {
  const started = performance.now();
  for (let n = from; n < from + count; n += batch) {
    const wait = rate > 0 ? started + ((n - from) / rate) * 1000 - performance.now() : 0;
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const rows: StoredMessage[] = [];
    const marks: LastSendMark[] = [];
    for (let k = n; k < Math.min(n + batch, from + count); k++) {
      const m = message(k, seqs);
      rows.push(m);
      marks.push({ channelId: m.channelId, channelType: m.channelType, uid: m.fromUid, seq: m.messageSeq });
    }
    const hits = await append(rows, marks);
    if (hits.length > 0) throw new Error('unexpected idempotency hit');
  }
}

/**
 * With `WRITER_BENCH_SYNC=<dir>`, the measured phase is bracketed for an outside tool
 * (`callgrind_control --zero` and `--dump`): `<dir>/warm` is written after the warm-up and
 * the run waits for `<dir>/go`; `<dir>/done` after the measured messages, then it waits for `<dir>/end`.
 */
async function handshake(mark: string, wait: string): Promise<void> {
  const sync = process.env.WRITER_BENCH_SYNC;
  if (!sync) return;
  writeFileSync(join(sync, mark), String(process.pid));
  while (!existsSync(join(sync, wait))) await new Promise((r) => setTimeout(r, 20));
}

/** The process's write counters (`/proc/self/io`), or undefined where there is none. */
function written(): { wchar: number; write_bytes: number } | undefined {
  if (!existsSync('/proc/self/io')) return undefined;
  const fields = Object.fromEntries(
    readFileSync('/proc/self/io', 'utf8')
      .trim()
      .split('\n')
      .map((line) => line.split(': ')),
  ) as Record<string, string>;
  return { wchar: Number(fields.wchar), write_bytes: Number(fields.write_bytes) };
}

await load(prefill, WARMUP);
await handshake('warm', 'go');
const io0 = written();
const cpu0 = process.cpuUsage();
const t0 = performance.now();
await load(prefill + WARMUP, total);
const ms = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
const io1 = written();
await handshake('done', 'end');
await store.close();
rmSync(run, { recursive: true, force: true });
if (!keep) rmSync(dir, { recursive: true, force: true });
console.log(
  JSON.stringify({
    prefill,
    messages: total,
    batch,
    channels,
    // Every thread of the process (the machine may be loaded: not evidence on its own).
    process_cpu_us_per_msg: Number(((cpu.user + cpu.system) / total).toFixed(2)),
    wall_ms: Math.round(ms),
    ...(io0 && io1
      ? {
          wchar_per_msg: Math.round((io1.wchar - io0.wchar) / total),
          write_bytes_per_msg: Math.round((io1.write_bytes - io0.write_bytes) / total),
        }
      : {}),
  }),
);
