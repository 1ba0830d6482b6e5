/**
 * `--capacity`: the staircase (not in CI). For each target, 1:1 at 2k, 4k, …
 * 12k msg/s and groups at 50, 100, … 300 msg/s, each step run twice; a step
 * holds when both runs are valid and have sendack p99 < 50 ms. Reports the
 * highest step that held twice in a row (climbing stops at the first miss).
 */
import { makeResult, type ScenarioResult } from './result.ts';
import { runFanout, fanoutUsers } from './scenarios/fanout.ts';
import { runOneToOne, oneToOneUsers } from './scenarios/one-to-one.ts';
import { runsScenario, startTarget } from './targets.ts';
import { gitRevision, machine } from './context.ts';
import { targetOptions, type BenchOptions } from './run.ts';
import type { Driver, TargetName } from './drivers/types.ts';
import type { Tally } from './writer-timings.ts';

/** sendack p99 a step must stay under, ms. */
export const CAPACITY_P99_MS = 50;
/** 1:1 steps, msg/s. */
export const ONE_TO_ONE_STEPS = [2000, 4000, 6000, 8000, 10000, 12000];
/** Group steps, group msg/s (each delivered to `members` receivers). */
export const GROUP_STEPS = [50, 100, 150, 200, 250, 300];

const holds = (r: ScenarioResult): boolean => {
  const p99 = r.figures.find((f) => f.key === 'sendack_p99_ms')?.value;
  return r.valid && p99 !== null && p99 !== undefined && p99 < CAPACITY_P99_MS;
};

/** What the staircase records of one step: its verdict, and how busy each side's core was. */
export interface StepSummary {
  scenario: string;
  valid: boolean;
  error: string | undefined;
  sendackP99Ms: number | null;
  failedGates: string[];
  /** Server CPU per 1k messages (1:1 steps) or per 1k deliveries (group steps), ms. */
  serverCpuMsPer1k: number | null;
  /** The server's CPU over the phase's wall time: 1 is one core busy all the time (every thread counted). */
  serverCores: number | null;
  /** How long the server's main thread was runnable but waited for a core, ms (its own other threads share that core). */
  serverWaitMs: number | null;
  /** The generator's CPU over the phase's wall time (the `generator-cpu` gate's share). */
  generatorCores: number | null;
  /**
   * The server's store writer during the step (Parley on the embedded store; null where the
   * target reports none): its commits (`storeCommits*` counts: how many, their time in all, ms,
   * and how many took over 20 ms), and its stops beside them, every reason together
   * (`writerPauses:*` counts: how often, for how long in all, ms, and how many lasted over 20 ms).
   */
  storeCommits: Tally | null;
  writerPauses: Tally | null;
}

/** The summary of one step's result. */
export function stepSummary(r: ScenarioResult): StepSummary {
  const c = r.counts;
  const figure = (key: string): number | null => r.figures.find((f) => f.key === key)?.value ?? null;
  const cores = (ms: number | undefined): number | null =>
    ms === undefined || !(c.wallMs! > 0) ? null : Math.round((ms / c.wallMs!) * 100) / 100;
  return {
    scenario: r.scenario,
    valid: r.valid,
    error: r.error,
    sendackP99Ms: figure('sendack_p99_ms'),
    failedGates: r.gates.filter((g) => !g.ok).map((g) => `${g.name}: ${g.detail}`),
    serverCpuMsPer1k: figure('cpu_ms_per_1k_msgs') ?? figure('cpu_ms_per_1k_deliveries'),
    serverCores: cores(c.serverCpuMs),
    serverWaitMs: c.serverWaitMs === undefined ? null : Math.round(c.serverWaitMs),
    generatorCores: cores(c.generatorCpuMs),
    storeCommits:
      c.storeCommits === undefined
        ? null
        : { count: c.storeCommits, ms: Math.round(c.storeCommitMs ?? 0), over20ms: c.storeCommitsOver20ms ?? 0 },
    writerPauses: writerPausesOf(c),
  };
}

/** The `writerPauses:*` counts of a result, every reason summed; null when it has none. */
function writerPausesOf(c: Record<string, number>): StepSummary['writerPauses'] {
  let found = false;
  const sum = { count: 0, ms: 0, over20ms: 0 };
  for (const [key, value] of Object.entries(c)) {
    if (key.startsWith('writerPauses:')) {
      found = true;
      sum.count += value;
    } else if (key.startsWith('writerPauseMs:')) sum.ms += value;
    else if (key.startsWith('writerPausesOver20ms:')) sum.over20ms += value;
  }
  return found ? { count: sum.count, ms: Math.round(sum.ms), over20ms: sum.over20ms } : null;
}

/** One line of the staircase's progress output for a step. */
export function stepLine(s: StepSummary): string {
  const n = (v: number | null, digits: number): string => (v === null ? '—' : v.toFixed(digits));
  return (
    `  ${s.scenario}: sendack p99 ${n(s.sendackP99Ms, 1)} ms, server ${n(s.serverCpuMsPer1k, 1)} ms per 1k,` +
    ` ${n(s.serverCores, 2)} of a core (main thread waited ${n(s.serverWaitMs, 0)} ms), generator ${n(s.generatorCores, 2)} of a core` +
    (s.storeCommits === null ? '' : `, store committed ${s.storeCommits.count} batches (${s.storeCommits.over20ms} over 20 ms)`) +
    (s.writerPauses === null
      ? ''
      : `, writer paused ${s.writerPauses.count}× for ${s.writerPauses.ms} ms (${s.writerPauses.over20ms} over 20 ms)`) +
    (s.error !== undefined ? `; error: ${s.error}` : s.failedGates.length > 0 ? `; failed: ${s.failedGates.join('; ')}` : '')
  );
}

/** The highest step whose two consecutive runs both held (0 when none did). */
export function highestHeld(results: readonly ScenarioResult[], steps: readonly number[]): number {
  let best = 0;
  for (const step of steps) {
    const runs = results.filter((r) => r.scenario.endsWith(`@${step}`));
    if (runs.length >= 2 && runs.slice(0, 2).every(holds)) best = step;
    else break;
  }
  return best;
}

async function withTarget(
  name: TargetName,
  o: BenchOptions,
  users: string[],
  fn: (d: Driver) => Promise<ScenarioResult[]>,
): Promise<ScenarioResult[]> {
  let driver: Driver | undefined;
  try {
    driver = await startTarget(name, targetOptions(o, 'capacity'));
    await driver.provisionUsers(users);
    return await fn(driver);
  } catch (e) {
    return [
      makeResult({
        scenario: 'capacity',
        title: 'capacity',
        target: name,
        figures: [],
        gates: [],
        counts: {},
        error: (e as Error).message,
      }),
    ];
  } finally {
    await driver?.stop();
  }
}

/** Runs the staircase for every target; returns a JSON-ready document and prints a summary on stderr. */
export async function runCapacity(o: BenchOptions): Promise<Record<string, unknown>> {
  const summary: Record<string, { oneToOne: number; groups: number; steps: StepSummary[] }> = {};
  const twice = (steps: number[]): number[] => steps.flatMap((s) => [s, s]);
  for (const target of o.targets) {
    o.log(`capacity ${target}: 1:1 ${ONE_TO_ONE_STEPS.join(',')} msg/s`);
    const one = await withTarget(target, o, oneToOneUsers(o.pairs), (d) =>
      runOneToOne(d, { ...o, pairs: o.pairs, rates: twice(ONE_TO_ONE_STEPS), continueWhile: holds }),
    );
    o.log(`capacity ${target}: groups ${runsScenario(target, 'S2') ? GROUP_STEPS.join(',') : '(not run)'} msg/s`);
    const groups = !runsScenario(target, 'S2')
      ? []
      : await withTarget(target, o, fanoutUsers(o.groups, o.members), (d) =>
          runFanout(d, { ...o, groups: o.groups, members: o.members, rates: twice(GROUP_STEPS), continueWhile: holds }),
        );
    const steps = [...one, ...groups].map(stepSummary);
    for (const step of steps) o.log(stepLine(step));
    summary[target] = { oneToOne: highestHeld(one, ONE_TO_ONE_STEPS), groups: highestHeld(groups, GROUP_STEPS), steps };
    o.log(`capacity ${target}: 1:1 holds up to ${summary[target].oneToOne} msg/s, groups up to ${summary[target].groups} msg/s`);
  }
  return { tool: 'parley-bench', mode: 'capacity', p99LimitMs: CAPACITY_P99_MS, git: gitRevision(), machine: machine(), summary };
}
