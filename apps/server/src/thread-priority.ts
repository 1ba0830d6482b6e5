import process from 'node:process';
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism, getPriority, setPriority } from 'node:os';

/**
 * How much lower than the main thread's the helper threads run (nice steps, up to 19). With one
 * usable CPU, V8's compiler threads (Node 20 calls them `node`, as every helper thread) compile
 * hot functions in bursts of tens of milliseconds, several at once, and the kernel shares the
 * one core fairly between them, the event loop and the store's writer: sends arriving in such a
 * burst waited for it (measured in S1 at 5k msg/s: 15-30 ms of each 55 ms window went to them
 * in the stalls that set the sendack p99). Ten steps lower, a helper gets about a tenth of a
 * busy thread's share: it runs when the core is otherwise idle and still makes progress when
 * it is not.
 */
export const HELPER_NICE_STEPS = 10;

/** What {@link lowerHelperThreads} did, for the start-up log line. */
export type HelperThreads = { lowered: number; nice: number } | { unchanged: 'several CPUs' | 'not Linux' } | { failed: string };

/**
 * With one usable CPU (a one-core machine, a cpuset or `taskset` of one), lowers the priority of
 * this process's helper threads named `node` (V8's platform workers, libuv's pool), leaving the
 * main thread and the store's named threads (`parley-writer`, which commits the sends, at the
 * main thread's priority; `parley-ckpt` lowers its own) as they are. With more CPUs they run
 * beside the main thread and are left alone. Linux only: `setpriority` on a thread id changes
 * that thread alone there. Run once the store has started (its threads name themselves first).
 */
export function lowerHelperThreads(): HelperThreads {
  if (process.platform !== 'linux') return { unchanged: 'not Linux' };
  if (availableParallelism() > 1) return { unchanged: 'several CPUs' };
  try {
    const main = process.pid;
    const nice = Math.min(19, getPriority(main) + HELPER_NICE_STEPS);
    let lowered = 0;
    for (const entry of readdirSync('/proc/self/task')) {
      const tid = Number(entry);
      if (!Number.isInteger(tid) || tid === main) continue;
      let name: string;
      try {
        name = readFileSync(`/proc/self/task/${entry}/comm`, 'utf8').trim();
      } catch {
        continue; // the thread ended meanwhile
      }
      if (name !== 'node' || getPriority(tid) >= nice) continue;
      setPriority(tid, nice);
      lowered++;
    }
    return { lowered, nice };
  } catch (err) {
    return { failed: (err as Error).message };
  }
}
