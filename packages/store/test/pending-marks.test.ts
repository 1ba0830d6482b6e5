import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import SqliteDatabase from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openEmbeddedStore, STORE_FILE, type LastSendMark, type Store, type StoredMessage } from '../src/index.ts';
import { storedMessage } from './support/seq-message.ts';
import { spawnTsChild } from './support/ts-child.ts';

/**
 * The embedded store's latest-send marks (`sqlite/writer-thread.ts`): a batch's marks are
 * committed into `pending_marks` with it and applied to `memberships` later: while batches keep
 * coming, a slice at a time inside their own transactions; when the writer is idle, in a
 * transaction of their own. Reads of memberships see a committed mark at once; closing applies
 * what is pending; a process killed with marks pending leaves them in the table, and the next
 * open applies them before its first batch. Real threads, a real file, `sync=full`.
 */

const CHILD = fileURLToPath(new URL('./support/append-marks-child.ts', import.meta.url));

function message(channelId: string, seq: number, fromUid: string): StoredMessage {
  return storedMessage(channelId, seq, { channelType: 2, messageId: 1000n + BigInt(seq), clientMsgNo: `${channelId}-${seq}`, fromUid });
}

const mark = (channelId: string, uid: string, seq: number): LastSendMark => ({ channelId, channelType: 2, uid, seq });

const dirs: string[] = [];
const stores: Store[] = [];

function newDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'parley-marks-'));
  dirs.push(d);
  return d;
}

async function open(dir: string, markApplyMs?: number): Promise<Store> {
  const store = await openEmbeddedStore({ dataDir: dir, sync: 'full', markApplyMs });
  stores.push(store);
  return store;
}

/** What the file holds, through a connection of its own: each member's last_send_seq and the pending rows. */
function onDisk(dir: string, channelId: string): { lastSend: Record<string, number>; pending: number } {
  const db = new SqliteDatabase(join(dir, STORE_FILE), { readonly: true });
  try {
    const rows = db.prepare('select uid, last_send_seq from memberships where channel_id = ? order by uid').all(channelId) as {
      uid: string;
      last_send_seq: number;
    }[];
    const pending = (db.prepare('select count(*) as n from pending_marks').get() as { n: number }).n;
    return { lastSend: Object.fromEntries(rows.map((r) => [r.uid, Number(r.last_send_seq)])), pending };
  } finally {
    db.close();
  }
}

afterEach(async () => {
  for (const s of stores.splice(0)) await s.close().catch(() => undefined);
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('embedded latest-send marks', () => {
  it('reads see a committed mark at once; memberships gets it when applied, at the latest on close', async () => {
    const dir = newDir();
    const store = await open(dir, 60_000);
    const paused: string[] = [];
    store.writerTimings!.onPause((reason) => paused.push(reason));
    const commits: number[] = [];
    store.writerTimings!.onCommit((ms) => commits.push(ms));
    await store.memberships.addMembers('g1', 2, ['alice', 'bob'], 1);
    await store.messages.appendBatch(
      [message('g1', 1, 'alice'), message('g1', 2, 'bob'), message('g1', 3, 'alice')],
      [mark('g1', 'alice', 3), mark('g1', 'bob', 2)],
    );
    // Committed into pending_marks only.
    expect(onDisk(dir, 'g1')).toEqual({ lastSend: { alice: 0, bob: 0 }, pending: 2 });
    expect((await store.memberships.get('g1', 2, 'alice'))?.lastSendSeq).toBe(3);
    expect((await store.memberships.pageByUid('bob', undefined, 10)).map((r) => [r.channelId, r.lastSendSeq])).toEqual([['g1', 2]]);
    // A later, higher mark replaces the pending one; a lower one never lowers it.
    await store.messages.appendBatch([message('g1', 4, 'bob')], [mark('g1', 'bob', 4)]);
    await store.messages.appendBatch([message('g1', 5, 'carol')], [mark('g1', 'alice', 1)]);
    expect((await store.memberships.get('g1', 2, 'bob'))?.lastSendSeq).toBe(4);
    expect((await store.memberships.get('g1', 2, 'alice'))?.lastSendSeq).toBe(3);
    // Commits are not pauses: with marks applied only on close, none was reported.
    expect(paused.filter((reason) => reason === 'marks')).toEqual([]);
    // Each batch's commit was reported once, with the writer's time on it (its fsync included).
    expect(commits).toHaveLength(3);
    for (const ms of commits) expect(ms).toBeGreaterThan(0);
    await store.close();
    expect(onDisk(dir, 'g1')).toEqual({ lastSend: { alice: 3, bob: 4 }, pending: 0 });
  });

  it('applies pending marks every markApplyMs while the store is idle', async () => {
    const dir = newDir();
    const store = await open(dir, 150);
    const seen: [string, number][] = [];
    store.writerTimings!.onPause((reason, ms) => seen.push([reason, ms]));
    await store.memberships.addMembers('g2', 2, ['alice'], 1);
    await store.messages.appendBatch([message('g2', 1, 'alice'), message('g2', 2, 'alice')], [mark('g2', 'alice', 2)]);
    expect((await store.memberships.get('g2', 2, 'alice'))?.lastSendSeq).toBe(2);
    await expect.poll(() => onDisk(dir, 'g2'), { timeout: 5000 }).toEqual({ lastSend: { alice: 2 }, pending: 0 });
    // The apply's own transaction was a pause of the writer, reported with its duration.
    await expect.poll(() => seen.filter(([reason]) => reason === 'marks').length, { timeout: 5000 }).toBeGreaterThanOrEqual(1);
    const marks = seen.filter(([reason]) => reason === 'marks').map(([, ms]) => ms);
    expect(marks.length).toBe(seen.length);
    expect(Math.max(...marks)).toBeGreaterThan(0);
    expect(seen.filter(([reason]) => reason === 'wal_restart')).toEqual([]);
    expect((await store.memberships.get('g2', 2, 'alice'))?.lastSendSeq).toBe(2);
    // A batch that finds its idempotency key committed writes nothing, its marks neither.
    const hits = await store.messages.appendChecked!([{ ...message('g2', 3, 'alice'), clientMsgNo: 'g2-1' }], [mark('g2', 'alice', 3)]);
    expect(hits).toHaveLength(1);
    expect((await store.memberships.get('g2', 2, 'alice'))?.lastSendSeq).toBe(2);
    expect(onDisk(dir, 'g2').pending).toBe(0);
  });

  it('under a steady stream of batches applies the marks in slices inside their transactions, never in one of its own', async () => {
    const dir = newDir();
    // A writer idle for markApplyMs applies everything in a transaction of its own: 300 ms is far
    // longer than any gap between these batches, so only the sweeps can apply the marks here.
    const store = await open(dir, 300);
    const paused: string[] = [];
    store.writerTimings!.onPause((reason) => paused.push(reason));
    const commits: number[] = [];
    store.writerTimings!.onCommit((ms) => commits.push(ms));
    // 300 senders: a sweep of all of them takes several slices (64 a batch).
    const senders = Array.from({ length: 300 }, (_, i) => `u${String(i).padStart(3, '0')}`);
    await store.memberships.addMembers('s1', 2, senders, 1);
    let seq = 0;
    const sendRound = async () => {
      // Every sender once, in batches of 30: each batch's marks are its senders' newest seqs.
      for (let b = 0; b < senders.length; b += 30) {
        const rows = senders.slice(b, b + 30).map((uid) => message('s1', ++seq, uid));
        await store.messages.appendBatch(
          rows,
          rows.map((r) => mark('s1', r.fromUid, r.messageSeq)),
        );
        await new Promise((r) => setTimeout(r, 5));
      }
    };
    // Rounds until memberships on disk holds marks while batches are still coming (a sweep ran).
    let rounds = 0;
    let seenApplied = false;
    const deadline = performance.now() + 15_000;
    while (!seenApplied && performance.now() < deadline) {
      await sendRound();
      rounds++;
      const disk = onDisk(dir, 's1');
      seenApplied = Object.values(disk.lastSend).every((v) => v > 0) && disk.pending < rounds * senders.length;
    }
    expect(seenApplied).toBe(true);
    // Applied without a transaction of their own: no pause, and one commit per batch.
    expect(paused.filter((reason) => reason === 'marks')).toEqual([]);
    expect(commits).toHaveLength(rounds * 10);
    // Reads see every sender's newest mark, applied or not.
    const last = seq - senders.length;
    for (const [i, uid] of senders.entries()) {
      expect((await store.memberships.get('s1', 2, uid))?.lastSendSeq).toBe(last + i + 1);
    }
    await store.close();
    const disk = onDisk(dir, 's1');
    expect(disk.pending).toBe(0);
    expect(senders.map((uid) => disk.lastSend[uid])).toEqual(senders.map((_, i) => last + i + 1));
  });

  it('a sweep raises a membership deleted and made again under another rowid by its key, and never the row now at its old rowid', async () => {
    const dir = newDir();
    const store = await open(dir, 300);
    await store.memberships.addMembers('r1', 2, ['alice', 'carol'], 1);
    await store.messages.appendBatch([message('r1', 1, 'alice')], [mark('r1', 'alice', 1)]);
    // Behind the store's back: alice's row goes, bob takes its rowid, alice comes back under a new one.
    const db = new SqliteDatabase(join(dir, STORE_FILE));
    const old = db.prepare(`select rowid from memberships where channel_id = 'r1' and uid = 'alice'`).pluck().get() as number;
    db.transaction(() => {
      db.prepare(`delete from memberships where channel_id = 'r1' and uid = 'alice'`).run();
      db.prepare(`insert into memberships (rowid, channel_id, channel_type, uid, updated_at) values (?, 'r1', 2, 'bob', 0)`).run(old);
      db.prepare(`insert into memberships (channel_id, channel_type, uid, updated_at) values ('r1', 2, 'alice', 0)`).run();
    })();
    db.close();
    // Batches keep coming (carol's), so the sweep of alice's mark runs inside one of them.
    const paused: string[] = [];
    store.writerTimings!.onPause((reason) => paused.push(reason));
    let seq = 1;
    const deadline = performance.now() + 10_000;
    while (onDisk(dir, 'r1').lastSend.alice !== 1 && performance.now() < deadline) {
      seq++;
      await store.messages.appendBatch([message('r1', seq, 'carol')], [mark('r1', 'carol', seq)]);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(onDisk(dir, 'r1').lastSend).toMatchObject({ alice: 1, bob: 0 });
    expect(paused.filter((reason) => reason === 'marks')).toEqual([]);
  });

  it('a process killed with marks pending leaves them in pending_marks; the next open applies them first', async () => {
    const dir = newDir();
    const setup = await open(dir);
    await setup.memberships.addMembers('k1', 2, ['alice'], 1);
    await setup.close();
    const child = spawnTsChild(CHILD, [dir]);
    try {
      await expect.poll(() => child.out() + child.err(), { timeout: 20_000 }).toContain('committed');
    } finally {
      child.kill();
    }
    expect(await child.exited).toBe('SIGKILL');
    expect(onDisk(dir, 'k1')).toEqual({ lastSend: { alice: 0 }, pending: 1 });
    const store = await open(dir, 60_000);
    expect(onDisk(dir, 'k1')).toEqual({ lastSend: { alice: 1 }, pending: 0 });
    expect((await store.memberships.get('k1', 2, 'alice'))?.lastSendSeq).toBe(1);
  });

  it('marks whose own applies keep failing are applied by the next batch after 10 × markApplyMs; while that fails, so do appends', async () => {
    const dir = newDir();
    const store = await open(dir, 200);
    await store.memberships.addMembers('f1', 2, ['alice'], 1);
    // A real failure of every apply (appends write messages and pending_marks, never memberships).
    const db = new SqliteDatabase(join(dir, STORE_FILE));
    db.exec(`create trigger refuse_marks before update of last_send_seq on memberships begin select raise(abort, 'marks refused'); end`);
    await store.messages.appendBatch([message('f1', 1, 'alice')], [mark('f1', 'alice', 1)]);
    const pendingFrom = performance.now();
    // Applies fail (the idle timer tries every 200 ms) and appends go on while the marks are not overdue.
    await new Promise((r) => setTimeout(r, 300));
    await store.messages.appendBatch([message('f1', 2, 'alice')], [mark('f1', 'alice', 2)]);
    expect(performance.now() - pendingFrom).toBeLessThan(2000);
    expect(onDisk(dir, 'f1')).toEqual({ lastSend: { alice: 0 }, pending: 2 });
    expect((await store.memberships.get('f1', 2, 'alice'))?.lastSendSeq).toBe(2);
    // Pending for 2 s (10 × markApplyMs): the next batch applies them in its own transaction, which fails whole.
    await new Promise((r) => setTimeout(r, Math.max(0, 2100 - (performance.now() - pendingFrom))));
    await expect(store.messages.appendBatch([message('f1', 3, 'alice')], [mark('f1', 'alice', 3)])).rejects.toThrow(/marks refused/);
    expect(onDisk(dir, 'f1')).toEqual({ lastSend: { alice: 0 }, pending: 2 });
    expect(db.prepare(`select count(*) as n from messages where channel_id = 'f1'`).get()).toEqual({ n: 2 });
    expect((await store.memberships.get('f1', 2, 'alice'))?.lastSendSeq).toBe(2);
    // Once applies work again nothing was lost: the batch goes in and every mark reaches memberships.
    db.exec('drop trigger refuse_marks');
    db.close();
    await store.messages.appendBatch([message('f1', 3, 'alice')], [mark('f1', 'alice', 3)]);
    expect((await store.memberships.get('f1', 2, 'alice'))?.lastSendSeq).toBe(3);
    await expect.poll(() => onDisk(dir, 'f1'), { timeout: 5000 }).toEqual({ lastSend: { alice: 3 }, pending: 0 });
  });

  it('refuses a markApplyMs that is not a whole number of milliseconds, and opens the same store after', async () => {
    const dir = newDir();
    for (const bad of [0, -1, 1.5, Number.NaN, 2 ** 31]) {
      await expect(openEmbeddedStore({ dataDir: dir, sync: 'full', markApplyMs: bad })).rejects.toThrow(
        /markApplyMs must be a whole number/,
      );
    }
    const store = await open(dir, 1000);
    await store.memberships.addMembers('g3', 2, ['alice'], 1);
    expect((await store.memberships.get('g3', 2, 'alice'))?.lastSendSeq).toBe(0);
  });
});
