import { parentPort, receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import { MAX_FORMAT_MAJOR_VERSION, openPebble, PebbleUnsupportedError, type PebbleDb } from '@parley/pebble';
import { readTails, scanShard } from './scan-shard.ts';
import { EventRecorder, TAIL_BUFFER_BYTES, type EventBatch } from './shard-events.ts';

/**
 * The body of a scan worker (see `scan-pool.ts`): takes shards of a job that
 * nobody has claimed yet, lowest first, and streams each one's recorded scan
 * to the main thread, which replays them in shard order.
 */

/** One source's shards offered to the pool. */
export interface ScanJob {
  gen: number;
  dirs: string[];
  /** Int32 slots, see `controlSlots`. */
  control: SharedArrayBuffer;
  /** Batches a worker may have posted and not yet seen consumed before it waits. */
  maxOutstanding: number;
}

/** What a worker posts on its port. */
export type ScanMessage =
  | { kind: 'ready' }
  | { gen: number; shard: number; kind: 'open'; version: number }
  | { gen: number; shard: number; kind: 'unreadable'; unsupported: boolean; message: string }
  | { gen: number; shard: number; kind: 'batch'; batch: EventBatch }
  | { gen: number; shard: number; kind: 'done'; keys: number }
  | { gen: number; shard: number; kind: 'error'; message: string };

/** Slots of a job's control array: the abort flag, who claimed each shard (0 nobody, -1 the main thread, w+1 worker w), batches in flight per worker. */
export function controlSlots(
  shards: number,
  workers: number,
): { abort: number; claim: (shard: number) => number; outstanding: (worker: number) => number; size: number } {
  return { abort: 0, claim: (s) => 1 + s, outstanding: (w) => 1 + shards + w, size: 1 + shards + workers };
}

/** Thrown inside a worker to drop a job the main thread gave up. */
class Aborted extends Error {}

/** Opens a shard for reading, or says why it cannot be read (the wording prepare reports). */
export function openShard(dir: string): { db: PebbleDb } | { kind: 'unsupported format' | 'unreadable'; message: string } {
  try {
    return { db: openPebble(dir) };
  } catch (err) {
    return { kind: err instanceof PebbleUnsupportedError ? 'unsupported format' : 'unreadable', message: (err as Error).message };
  }
}

function scanClaimed(job: ScanJob, index: number, workers: number, shard: number, port: MessagePort): void {
  const opened = openShard(job.dirs[shard]!);
  if (!('db' in opened)) {
    const m: ScanMessage = {
      gen: job.gen,
      shard,
      kind: 'unreadable',
      unsupported: opened.kind === 'unsupported format',
      message: opened.message,
    };
    port.postMessage(m);
    return;
  }
  try {
    scanOpened(job, index, workers, shard, opened.db, port);
  } finally {
    opened.db.close();
  }
}

function scanOpened(job: ScanJob, index: number, workers: number, shard: number, db: PebbleDb, port: MessagePort): void {
  const ctl = new Int32Array(job.control);
  const slots = controlSlots(job.dirs.length, workers);
  const out = slots.outstanding(index);
  const send = (m: ScanMessage, transfer?: ArrayBuffer[]) => port.postMessage(m, transfer);
  const version = db.formatMajorVersion;
  send({ gen: job.gen, shard, kind: 'open', version });
  if (version > MAX_FORMAT_MAJOR_VERSION) return;
  const recorder = new EventRecorder(
    (batch, transfer) => {
      if (Atomics.load(ctl, slots.abort) !== 0) throw new Aborted();
      send({ gen: job.gen, shard, kind: 'batch', batch }, transfer);
      Atomics.add(ctl, out, 1);
      for (let n = Atomics.load(ctl, out); n >= job.maxOutstanding; n = Atomics.load(ctl, out)) {
        if (Atomics.load(ctl, slots.abort) !== 0) throw new Aborted();
        Atomics.wait(ctl, out, n, 1000);
      }
    },
    undefined,
    () => spareBuffer(port),
  );
  try {
    readTails(db, recorder);
    recorder.endTails();
    const { keys } = scanShard(db, recorder);
    recorder.flush();
    send({ gen: job.gen, shard, kind: 'done', keys });
  } catch (err) {
    if (err instanceof Aborted) throw err;
    send({ gen: job.gen, shard, kind: 'error', message: (err as Error).message });
  }
}

/** A tail buffer the main thread has replayed and handed back on `port`, if one is waiting. */
function spareBuffer(port: MessagePort): ArrayBuffer | undefined {
  for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port)) {
    const b = m.message as unknown;
    if (b instanceof ArrayBuffer && b.byteLength === TAIL_BUFFER_BYTES) return b;
  }
  return undefined;
}

/** Serves jobs from the main thread until the worker is terminated. */
export function serveScanJobs(): void {
  const { index, workers, port } = workerData as { index: number; workers: number; port: MessagePort };
  parentPort!.on('message', (job: ScanJob) => {
    const ctl = new Int32Array(job.control);
    const slots = controlSlots(job.dirs.length, workers);
    try {
      for (let shard = 0; shard < job.dirs.length; shard++) {
        if (Atomics.load(ctl, slots.abort) !== 0) return;
        if (Atomics.compareExchange(ctl, slots.claim(shard), 0, index + 1) === 0) scanClaimed(job, index, workers, shard, port);
      }
    } catch (err) {
      if (!(err instanceof Aborted)) throw err;
    }
  });
  port.postMessage({ kind: 'ready' } satisfies ScanMessage);
}
