import { closeSync, mkdtempSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { expect, it } from 'vitest';
import { openEmbeddedStore, type StoredMessage } from '../src/index.ts';
import { FOLLOW_AFTER_WAL_BYTES, WAL_SIZE_LIMIT_BYTES } from '../src/sqlite/writer.ts';

/**
 * The embedded store's WAL under appends without a pause: the writer thread
 * commits while the checkpointer thread copies, and SQLite must still write the
 * WAL from its start again now and then, or the `-wal` file grows with every
 * commit until the disk is full.
 */

/**
 * The WAL header's checkpoint sequence number (bytes 12–15, big-endian), read
 * from the file without SQLite: SQLite adds one each time it restarts the WAL.
 */
function walSequence(file: string): number {
  const fd = openSync(file, 'r');
  try {
    const header = Buffer.alloc(32);
    expect(readSync(fd, header, 0, header.length, 0)).toBe(header.length);
    return header.readUInt32BE(12);
  } finally {
    closeSync(fd);
  }
}

function message(channelId: string, seq: number, id: bigint, payloadBytes: number): StoredMessage {
  return {
    channelId,
    channelType: 1,
    messageSeq: seq,
    messageId: id,
    clientMsgNo: `c${seq}`,
    fromUid: `u-${channelId}`,
    setting: 0,
    flags: 0,
    expire: 0,
    topic: '',
    createdAt: 1_700_000_000_000 + seq,
    payload: new Uint8Array(payloadBytes).fill(seq & 0xff),
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Batches in flight at once, so the writer thread always has the next one waiting (as under load). */
const APPENDERS = 4;
const ROWS_PER_BATCH = 10;
/** Only ends a wait that never ends when the WAL is not restarted (the failure); nothing is asserted on time. */
const GIVE_UP_AFTER_MS = 45_000;

/** A store on a fresh data directory, fed by `APPENDERS` loops appending batches (of `sizes.payloadBytes` each) until `stop()`. */
async function loaded(payloadBytes: number) {
  const sizes = { payloadBytes };
  const dir = mkdtempSync(join(tmpdir(), 'parley-wal-'));
  const store = await openEmbeddedStore({ dataDir: dir, sync: 'full' });
  const wal = join(dir, 'parley.db-wal');
  // The writer's follow-up checkpoints (the pauses that let the WAL restart), in ms.
  const followUps: number[] = [];
  store.writerTimings!.onPause((reason, ms) => reason === 'wal_restart' && followUps.push(ms));
  await store.messages.appendBatch([message('first', 1, 1n, payloadBytes)], []);
  const counts = { appended: 1, batches: 0 };
  let stopping = false;
  const appender = async (k: number) => {
    for (let seq = 1; !stopping;) {
      const rows: StoredMessage[] = [];
      for (let i = 0; i < ROWS_PER_BATCH; i++, seq++) {
        rows.push(message(`ch${k}`, seq, BigInt(k + 1) * 1_000_000_000n + BigInt(seq), sizes.payloadBytes));
      }
      await store.messages.appendBatch(rows, []);
      counts.appended += rows.length;
      counts.batches++;
    }
  };
  const appenders = Array.from({ length: APPENDERS }, (_, k) => appender(k));
  let maxWalBytes = 0;
  // The WAL's growth before its first restart: (ms, bytes) of the first and the latest poll.
  const firstSequence = walSequence(wal);
  let growthFrom: [number, number] | undefined;
  let growthTo: [number, number] | undefined;
  return {
    dir,
    wal,
    counts,
    followUps,
    sizes,
    /** The largest the `-wal` file was seen. */
    maxWalBytes: () => (maxWalBytes = Math.max(maxWalBytes, statSync(wal).size)),
    /**
     * Bytes a second the appends added to the WAL before its first restart, as polled by `until`
     * (undefined before two polls): how fast this machine's disk and CPU fill it.
     */
    walBytesPerSecond: () =>
      growthFrom && growthTo && growthTo[0] > growthFrom[0]
        ? ((growthTo[1] - growthFrom[1]) * 1000) / (growthTo[0] - growthFrom[0])
        : undefined,
    /**
     * Waits, appending, until `done()` (read while the writer may be writing: only to decide
     * when to stop; what is asserted is read after `stop`), or gives up.
     */
    async until(done: () => boolean) {
      const giveUpAt = performance.now() + GIVE_UP_AFTER_MS;
      while (!done() && performance.now() < giveUpAt) {
        const size = statSync(wal).size;
        maxWalBytes = Math.max(maxWalBytes, size);
        if (walSequence(wal) === firstSequence) {
          const sample: [number, number] = [performance.now(), size];
          growthFrom ??= sample;
          growthTo = sample;
        }
        await sleep(50);
      }
    },
    async stop() {
      stopping = true;
      await Promise.all(appenders);
      maxWalBytes = Math.max(maxWalBytes, statSync(wal).size);
    },
    async close() {
      stopping = true;
      await Promise.allSettled(appenders);
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

it('restarts the WAL while batches are appended without a pause, so its file stays bounded', async () => {
  const load = await loaded(64);
  try {
    const first = walSequence(load.wal);
    // A restart follows the first checkpointer pass (one a second) over a WAL of 128 MiB or more.
    await load.until(() => walSequence(load.wal) - first >= 2);
    await load.stop();

    // Thousands of commits, each a few pages of the WAL, and yet it was written from its start again and again.
    expect(load.counts.batches).toBeGreaterThan(100);
    expect(walSequence(load.wal) - first).toBeGreaterThanOrEqual(2);
    // Bounded: 128 MiB and about a second of appends (a checkpointer pass a second). The appends
    // fill the WAL as fast as this machine commits: ~16 MB a second on some hosts, 50–70 MB on
    // others, so the bound is the larger of the size limit and 128 MiB plus three seconds of appends
    // at the rate seen before the first restart (a pass may come late on a loaded machine); without
    // restarts the file grows by that rate for as long as appends go on.
    const perSecond = load.walBytesPerSecond();
    expect(perSecond).toBeGreaterThan(0);
    expect(load.maxWalBytes()).toBeLessThan(Math.max(WAL_SIZE_LIMIT_BYTES, FOLLOW_AFTER_WAL_BYTES + 3 * perSecond!));
    // Each restart came after the writer's follow-up checkpoint, a pause of its commits it reports.
    expect(load.followUps.length).toBeGreaterThanOrEqual(1);
    expect(Math.max(...load.followUps)).toBeGreaterThan(0);

    // Every acknowledged message is there, read by a connection of its own.
    const reader = new SqliteDatabase(join(load.dir, 'parley.db'), { readonly: true });
    try {
      expect(reader.prepare('select count(*) from messages').pluck().get()).toBe(load.counts.appended);
      expect(reader.pragma('quick_check', { simple: true })).toBe('ok');
    } finally {
      reader.close();
    }
  } finally {
    await load.close();
  }
}, 90_000);

it('lets a reader keep the WAL from restarting, then restarts it and cuts its file back to the limit', async () => {
  // 4 KiB messages: the WAL passes the limit in a few seconds.
  const load = await loaded(4096);
  const reader = new SqliteDatabase(join(load.dir, 'parley.db'), { readonly: true });
  try {
    await load.until(() => load.counts.batches >= 20);
    // A read transaction on a snapshot the WAL holds: no frame after it can be copied, so no restart.
    reader.exec('begin');
    const seen = reader.prepare('select count(*) from messages').pluck().get() as number;
    const first = walSequence(load.wal);
    await load.until(() => statSync(load.wal).size > WAL_SIZE_LIMIT_BYTES);
    expect(walSequence(load.wal)).toBe(first);
    expect(statSync(load.wal).size).toBeGreaterThan(WAL_SIZE_LIMIT_BYTES);
    // Its snapshot is unchanged under all those commits.
    expect(reader.prepare('select count(*) from messages').pluck().get()).toBe(seen);

    reader.exec('commit');
    // Small messages again (a restart each time the WAL has grown to 128 MiB again).
    load.sizes.payloadBytes = 64;
    await load.until(() => walSequence(load.wal) - first >= 2);
    await load.stop();
    expect(walSequence(load.wal) - first).toBeGreaterThanOrEqual(2);
    // The commit after the restart cut the file back: it is reused from its start, not grown.
    expect(statSync(load.wal).size).toBeLessThanOrEqual(WAL_SIZE_LIMIT_BYTES);
    expect(reader.prepare('select count(*) from messages').pluck().get()).toBe(load.counts.appended);
  } finally {
    reader.close();
    await load.close();
  }
}, 120_000);
