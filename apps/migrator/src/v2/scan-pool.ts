import { availableParallelism } from 'node:os';
import { MessageChannel, type MessagePort, type Worker } from 'node:worker_threads';
import { MAX_FORMAT_MAJOR_VERSION } from '@parley/pebble';
import { readTails, scanShard } from './scan-shard.ts';
import { replay, TAIL_BUFFER_BYTES, type ReplaySink } from './shard-events.ts';
import { controlSlots, openShard, type ScanJob, type ScanMessage } from './scan-worker.ts';
import { startWorker } from '../worker-thread.ts';

/**
 * Shards read in parallel: worker threads (started once per process and kept,
 * idle and unreferenced, between jobs) take shards nobody has claimed yet,
 * lowest first, while the main thread consumes every shard in order, reading
 * itself any shard no worker has claimed when it gets there. Results are
 * therefore the same, in the same order, whether workers help or not (none
 * yet started, none available, one core). Memory stays bounded: a worker
 * waits once `MAX_OUTSTANDING` of its batches are not yet replayed.
 */

/** Scan workers: one per core (the main thread mostly checks and writes), at most 4; none on one core. */
const CORES = availableParallelism();
const WORKERS = CORES > 1 ? Math.min(CORES, 4) : 0;
const MAX_OUTSTANDING = 4;
/**
 * Sources smaller than this (bytes of their files) do not start the workers:
 * starting them costs more than they save on a small source. Workers already
 * running (a process that has read a big source, the benchmark) still help.
 */
export const SCAN_WORKERS_MIN_BYTES = 64 << 20;

/** The main-thread side of one worker. */
class PoolWorker {
  /** Messages of the current job, in arrival order; others are dropped. */
  private queue: ScanMessage[] = [];
  private wake: (() => void) | undefined;
  private gen = -1;
  failure: Error | undefined;
  ready = false;

  constructor(
    readonly index: number,
    private readonly worker: Worker,
    private readonly port: MessagePort,
  ) {
    port.on('message', (m: ScanMessage) => {
      if (m.kind === 'ready') this.ready = true;
      else if (m.gen === this.gen) this.queue.push(m);
      this.wake?.();
    });
    worker.on('error', (err) => this.fail(err));
    worker.on('exit', (code) => this.fail(new Error(`scan worker exited with code ${code}`)));
    this.release();
  }

  private fail(err: Error): void {
    this.failure ??= err;
    this.wake?.();
  }

  /** Offers a job; the process stays alive until `release`. */
  start(job: ScanJob): void {
    this.gen = job.gen;
    this.queue = [];
    this.worker.ref();
    this.port.ref();
    this.worker.postMessage(job);
  }

  release(): void {
    this.gen = -1;
    this.queue = [];
    this.worker.unref();
    this.port.unref();
  }

  /** Hands a replayed batch's buffer back to the worker, which reuses it. */
  giveBack(buffer: ArrayBufferLike): void {
    if (buffer instanceof ArrayBuffer && buffer.byteLength === TAIL_BUFFER_BYTES && !this.failure) this.port.postMessage(buffer, [buffer]);
  }

  async next(): Promise<ScanMessage> {
    for (;;) {
      const m = this.queue.shift();
      if (m) return m;
      if (this.failure) throw this.failure;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }
}

let pool: PoolWorker[] | undefined;
let jobs = 0;

/** The live workers, started if `start` and not yet running; none where worker threads cannot start. */
function liveWorkers(start: boolean): PoolWorker[] {
  if (!pool && start) {
    pool = [];
    for (let index = 0; index < WORKERS; index++) {
      try {
        const { port1, port2 } = new MessageChannel();
        const worker = startWorker(new URL('./scan-thread.ts', import.meta.url), {
          workerData: { index, workers: WORKERS, port: port2 },
          transferList: [port2],
          execArgv: [],
        });
        pool.push(new PoolWorker(index, worker, port1));
      } catch {
        break;
      }
    }
  }
  return (pool ?? []).filter((w) => !w.failure);
}

/**
 * Starts the scan workers if they are not running yet. Loading them takes
 * about 80 ms from dist/, a few hundred milliseconds from the sources (tsx
 * compiles the reader); shards are read on the main thread until they are up.
 */
export function startScanWorkers(): void {
  liveWorkers(true);
}

/** Resolves once `count` workers (or all there are) have loaded; for tests that must see workers take shards. */
export async function scanWorkersReady(count = WORKERS): Promise<number> {
  for (;;) {
    const live = liveWorkers(true);
    const ready = live.filter((w) => w.ready).length;
    if (ready >= Math.min(count, live.length)) return ready;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** What reading one shard gave. `keys` is absent when its format is too new to read. */
export type ShardRead = { unreadable: string } | { version: number; keys?: number };

/** The shards of one source, offered to the workers. Call `close` when done or failing. */
export class ShardScan {
  private readonly ctl: Int32Array;
  private readonly slots: ReturnType<typeof controlSlots>;
  private readonly workers: PoolWorker[];

  /** `startWorkers`: start the workers if they are not running (else only running ones help). */
  constructor(dirs: readonly string[], startWorkers: boolean) {
    this.workers = liveWorkers(startWorkers);
    this.slots = controlSlots(dirs.length, WORKERS);
    const control = new SharedArrayBuffer(this.slots.size * 4);
    this.ctl = new Int32Array(control);
    const job: ScanJob = { gen: ++jobs, dirs: [...dirs], control, maxOutstanding: MAX_OUTSTANDING };
    for (const w of this.workers) w.start(job);
  }

  /** Reads shard `shard` into the sink `sinkFor` makes: replays a worker's scan of it, or scans it here if no worker has claimed it. */
  async read(shard: number, dir: string, sinkFor: () => ReplaySink): Promise<ShardRead> {
    const owner = Atomics.compareExchange(this.ctl, this.slots.claim(shard), 0, -1);
    if (owner === 0) return readHere(dir, sinkFor);
    const w = this.workers.find((x) => x.index === owner - 1)!;
    const next = async () => {
      const m = await w.next();
      if (!('shard' in m) || m.shard !== shard)
        throw new Error(`scan worker ${w.index}: expected shard ${shard}, got ${JSON.stringify(m).slice(0, 100)}`);
      return m;
    };
    const opened = await next();
    if (opened.kind === 'unreadable')
      return { unreadable: `${opened.unsupported ? 'unsupported format' : 'unreadable'}: ${opened.message}` };
    if (opened.kind !== 'open') throw new Error(`scan worker ${w.index}: shard ${shard} did not open (${opened.kind})`);
    if (opened.version > MAX_FORMAT_MAJOR_VERSION) return { version: opened.version };
    const sink = sinkFor();
    for (;;) {
      const m = await next();
      if (m.kind === 'batch') {
        replay(m.batch, sink);
        w.giveBack(m.batch.bytes.buffer);
        Atomics.sub(this.ctl, this.slots.outstanding(w.index), 1);
        Atomics.notify(this.ctl, this.slots.outstanding(w.index));
      } else if (m.kind === 'done') {
        return { version: opened.version, keys: m.keys };
      } else if (m.kind === 'error') {
        throw new Error(m.message);
      } else {
        throw new Error(`scan worker ${w.index}: unexpected ${m.kind} in shard ${shard}`);
      }
    }
  }

  /** Stops the workers' part of the job (they drop what they were reading) and lets the process exit. */
  close(): void {
    Atomics.store(this.ctl, this.slots.abort, 1);
    for (let i = 0; i < WORKERS; i++) Atomics.notify(this.ctl, this.slots.outstanding(i));
    for (const w of this.workers) w.release();
  }
}

function readHere(dir: string, sinkFor: () => ReplaySink): ShardRead {
  const opened = openShard(dir);
  if (!('db' in opened)) return { unreadable: `${opened.kind}: ${opened.message}` };
  try {
    const version = opened.db.formatMajorVersion;
    if (version > MAX_FORMAT_MAJOR_VERSION) return { version };
    const sink = sinkFor();
    readTails(opened.db, sink);
    sink.loadingTails = false;
    return { version, keys: scanShard(opened.db, sink).keys };
  } finally {
    opened.db.close();
  }
}
