import { closeSync, mkdtempSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { expect, it } from 'vitest';
import { openEmbeddedStore, type StoredMessage } from '../src/index.ts';

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

function message(channelId: string, seq: number, id: bigint): StoredMessage {
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
    payload: new Uint8Array(64).fill(seq & 0xff),
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Batches in flight at once, so the writer thread always has the next one waiting (as under load). */
const APPENDERS = 4;
const ROWS_PER_BATCH = 10;
/** Restarts to see before stopping: each follows a checkpointer pass (one a second). */
const RESTARTS_WANTED = 3;
/** Only ends the loop when the WAL is never restarted (the failure); nothing is asserted on time. */
const GIVE_UP_AFTER_MS = 20_000;

it('restarts the WAL while batches are appended without a pause, so its file stays bounded', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'parley-wal-'));
  const store = await openEmbeddedStore({ dataDir: dir, sync: 'full' });
  const wal = join(dir, 'parley.db-wal');
  let appended = 0;
  let batches = 0;
  let stop = false;
  try {
    await store.messages.appendBatch([message('first', 1, 1n)], []);
    appended++;
    const first = walSequence(wal);
    const appender = async (k: number) => {
      for (let seq = 1; !stop;) {
        const rows: StoredMessage[] = [];
        for (let i = 0; i < ROWS_PER_BATCH; i++, seq++) rows.push(message(`ch${k}`, seq, BigInt(k) * 1_000_000_000n + BigInt(seq)));
        await store.messages.appendBatch(rows, []);
        appended += rows.length;
        batches++;
      }
    };
    const appenders = Array.from({ length: APPENDERS }, (_, k) => appender(k));
    const giveUpAt = performance.now() + GIVE_UP_AFTER_MS;
    let maxWalBytes = 0;
    // Read while the writer may be writing: only to decide when to stop; the figures asserted are read after.
    while (walSequence(wal) - first < RESTARTS_WANTED && performance.now() < giveUpAt) {
      maxWalBytes = Math.max(maxWalBytes, statSync(wal).size);
      await sleep(50);
    }
    stop = true;
    await Promise.all(appenders);
    maxWalBytes = Math.max(maxWalBytes, statSync(wal).size);

    // Thousands of commits, each a few pages of the WAL, and yet it was written from its start again and again.
    expect(batches).toBeGreaterThan(100);
    expect(walSequence(wal) - first).toBeGreaterThanOrEqual(RESTARTS_WANTED);
    // Bounded: a few seconds of appends at most (without restarts this grows ~16 MB a second at 5k messages/s).
    expect(maxWalBytes).toBeLessThan(64 * 1024 * 1024);

    // Every acknowledged message is there, read by a connection of its own.
    const reader = new SqliteDatabase(join(dir, 'parley.db'), { readonly: true });
    try {
      expect(reader.prepare('select count(*) from messages').pluck().get()).toBe(appended);
      expect(reader.pragma('quick_check', { simple: true })).toBe('ok');
    } finally {
      reader.close();
    }
  } finally {
    stop = true;
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
