import { Worker } from 'node:worker_threads';
import { digestFile, type FileDigest } from './file-digest.ts';

/**
 * SHA-256 of whole files on one hashing thread, kept per process and idle
 * (unreferenced) between jobs, so the main thread goes on reading shards or
 * writing records while sources are fingerprinted. The thread runs plain
 * JavaScript and starts in tens of milliseconds. Where it cannot start or
 * dies, files are hashed on the main thread instead: same result.
 */

interface Job {
  files: readonly string[];
  lines: boolean;
  resolve: (digests: FileDigest[]) => void;
  reject: (err: Error) => void;
}

let worker: Worker | undefined;
let unavailable = false;
let nextId = 0;
const pending = new Map<number, Job>();

function hashHere(job: Job): void {
  try {
    job.resolve(job.files.map((f) => digestFile(f, job.lines)));
  } catch (err) {
    job.reject(err as Error);
  }
}

/** The worker died or could not start: what it had not answered is hashed here, and so is everything after. */
function giveUp(): void {
  unavailable = true;
  worker = undefined;
  const jobs = [...pending.values()];
  pending.clear();
  for (const job of jobs) hashHere(job);
}

function hashWorker(): Worker | undefined {
  if (worker || unavailable) return worker;
  try {
    const w = new Worker(new URL('./hash-worker.js', import.meta.url), { execArgv: [] });
    w.on('message', (m: { id: number; digests?: FileDigest[]; error?: string }) => {
      const job = pending.get(m.id);
      if (!job) return;
      pending.delete(m.id);
      if (pending.size === 0) w.unref();
      if (m.digests) job.resolve(m.digests);
      else job.reject(new Error(m.error));
    });
    w.on('error', giveUp);
    w.on('exit', giveUp);
    w.unref();
    worker = w;
  } catch {
    unavailable = true;
  }
  return worker;
}

/**
 * SHA-256, size and (if `lines`) newline count of each file, in order, read
 * now on the hashing thread; rejects with the first read error.
 */
export function digestFiles(files: readonly string[], lines: boolean): Promise<FileDigest[]> {
  return new Promise((resolve, reject) => {
    const job: Job = { files, lines, resolve, reject };
    const w = hashWorker();
    if (!w) {
      hashHere(job);
      return;
    }
    const id = nextId++;
    pending.set(id, job);
    w.ref();
    w.postMessage({ id, files, lines });
  });
}

/** Hex SHA-256 of each file, in order (see `digestFiles`). */
export async function hashFiles(files: readonly string[]): Promise<string[]> {
  return (await digestFiles(files, false)).map((d) => d.sha256);
}
