/**
 * Per-process CPU time and memory read from `/proc`, so that "CPU per unit of
 * work" is independent of how busy the machine is (wall-clock throughput is not).
 */
import process from 'node:process';
import { performance } from 'node:perf_hooks';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

let ticks: number | undefined;

/** Clock ticks per second of `utime`/`stime` in `/proc/<pid>/stat` (`getconf CLK_TCK`, normally 100). */
export function clockTicks(): number {
  if (ticks === undefined) {
    try {
      ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticks = 100;
    }
  }
  return ticks;
}

/** User and system CPU of a `/proc/…/stat` line, ms. */
function userSys(stat: string): { user: number; sys: number } {
  // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: (Number(rest[11]) * 1000) / clockTicks(), sys: (Number(rest[12]) * 1000) / clockTicks() };
}

/** User + system CPU time of a process (all its threads), in milliseconds; resolution 1000/CLK_TCK ms. */
export function cpuMs(pid: number): number {
  const { user, sys } = userSys(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  return user + sys;
}

/**
 * CPU of a process split by kind, ms: user and system time of the whole
 * process, and per thread group (`main` = the main thread; the others by
 * their kernel name: Parley's SQLite threads name themselves `parley-writer`
 * and `parley-ckpt`; in Node 20 V8's and libuv's threads are all `node`):
 * where a process's CPU goes besides its event loop.
 */
export function cpuBreakdown(pid: number): Record<string, number> {
  const total = userSys(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  const out: Record<string, number> = { user: total.user, sys: total.sys };
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = Number(tid) === pid ? 'main' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const t = userSys(stat);
      out[`thread:${name}`] = (out[`thread:${name}`] ?? 0) + t.user + t.sys;
    }
  } catch {
    // A thread ended while being read: the totals above still hold.
  }
  return out;
}

/**
 * The threads of a process as `name [×count] state cpu-ms wait-channel` (state as in
 * `/proc/<pid>/task/<tid>/stat`: R running, S sleeping, D in uninterruptible
 * wait, T stopped, Z ended), for a diagnostic of a process that stopped
 * answering: busy (R, CPU climbing), stuck in the kernel (D) or idle (S).
 */
export function threadStates(pid: number): string {
  try {
    // Threads alike (name, state, wait channel) are one entry, with their count and CPU summed.
    const groups = new Map<string, { count: number; ms: number }>();
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = Number(tid) === pid ? 'main' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      let wchan = '';
      try {
        wchan = readFileSync(`/proc/${pid}/task/${tid}/wchan`, 'utf8').trim();
      } catch {
        // Not readable here: the state alone.
      }
      const key = `${name}\t${state}\t${wchan === '0' ? '' : wchan}`;
      const g = groups.get(key) ?? { count: 0, ms: 0 };
      const t = userSys(stat);
      g.count++;
      g.ms += t.user + t.sys;
      groups.set(key, g);
    }
    return [...groups]
      .map(([key, g]) => {
        const [name, state, wchan] = key.split('\t');
        return `${name}${g.count > 1 ? ` ×${g.count}` : ''} ${state} ${Math.round(g.ms)} ms${wchan ? ` ${wchan}` : ''}`;
      })
      .join('; ');
  } catch (e) {
    return `threads of ${pid} unreadable: ${(e as Error).message}`;
  }
}

/** `b - a` per key (keys of `b`). */
function minus(b: Record<string, number>, a: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(b).map(([k, v]) => [k, Math.round(v - (a[k] ?? 0))]));
}

/** Resident set size of a process (`VmRSS` of `/proc/<pid>/status`), in KiB. */
export function rssKb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /VmRSS:\s+(\d+)\s+kB/.exec(status);
  return m ? Number(m[1]) : 0;
}

/**
 * Time the main thread of `pid` spent runnable but waiting for a CPU
 * (`/proc/<pid>/schedstat`, field 2), in ms: high values mean something else
 * was using the core (noise), 0 when unavailable.
 */
export function runQueueWaitMs(pid: number | 'self'): number {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[1]) / 1e6;
  } catch {
    return 0;
  }
}

/** What a {@link CpuMeter} read: CPU and run-queue wait of the server and the generator, and wall time, all ms. */
export interface CpuReading {
  serverMs: number;
  generatorMs: number;
  wallMs: number;
  serverWaitMs: number;
  generatorWaitMs: number;
  /** The server's CPU by kind (user, sys, per thread group), ms. */
  serverBreakdownMs: Record<string, number>;
  /** The generator's CPU the same way (its main thread against V8's compiler and GC threads), ms. */
  generatorBreakdownMs: Record<string, number>;
}

/** A CPU meter over one measured phase of a server process and of this generator process. */
export interface CpuMeter {
  /** Readings since the meter started. */
  read(): CpuReading;
}

/** One measured phase of a server: its label and when it ran, CLOCK_MONOTONIC nanoseconds (`perf record -k mono`'s clock). */
export interface MeasuredPhase {
  label: string;
  startNs: bigint;
  endNs: bigint;
}

const phases = new Map<number, MeasuredPhase[]>();

/** The phases every {@link CpuMeter} of `pid` measured so far, in the order they ended (what `--perf` writes beside its file). */
export function measuredPhases(pid: number): readonly MeasuredPhase[] {
  return phases.get(pid) ?? [];
}

/**
 * Starts measuring `pid` (the server) and this process (the generator) from now; each `read()`
 * also records the phase, under `label`, for {@link measuredPhases}.
 */
export function startCpuMeter(pid: number, label: string): CpuMeter {
  const startNs = process.hrtime.bigint();
  const server0 = cpuMs(pid);
  const breakdown0 = cpuBreakdown(pid);
  const genBreakdown0 = cpuBreakdown(process.pid);
  const gen0 = process.cpuUsage();
  const wait0 = runQueueWaitMs(pid);
  const genWait0 = runQueueWaitMs('self');
  const wall0 = performance.now();
  return {
    read() {
      const gen = process.cpuUsage(gen0);
      const list = phases.get(pid) ?? [];
      list.push({ label, startNs, endNs: process.hrtime.bigint() });
      phases.set(pid, list);
      return {
        serverMs: cpuMs(pid) - server0,
        generatorMs: (gen.user + gen.system) / 1000,
        wallMs: performance.now() - wall0,
        serverWaitMs: runQueueWaitMs(pid) - wait0,
        generatorWaitMs: runQueueWaitMs('self') - genWait0,
        serverBreakdownMs: minus(cpuBreakdown(pid), breakdown0),
        generatorBreakdownMs: minus(cpuBreakdown(process.pid), genBreakdown0),
      };
    },
  };
}
