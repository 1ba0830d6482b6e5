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
  const summary: Record<string, { oneToOne: number; groups: number; steps: unknown[] }> = {};
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
    const steps = [...one, ...groups].map((r) => ({
      scenario: r.scenario,
      valid: r.valid,
      error: r.error,
      sendackP99Ms: r.figures.find((f) => f.key === 'sendack_p99_ms')?.value ?? null,
      failedGates: r.gates.filter((g) => !g.ok).map((g) => `${g.name}: ${g.detail}`),
    }));
    summary[target] = { oneToOne: highestHeld(one, ONE_TO_ONE_STEPS), groups: highestHeld(groups, GROUP_STEPS), steps };
    o.log(`capacity ${target}: 1:1 holds up to ${summary[target].oneToOne} msg/s, groups up to ${summary[target].groups} msg/s`);
  }
  return { tool: 'parley-bench', mode: 'capacity', p99LimitMs: CAPACITY_P99_MS, git: gitRevision(), machine: machine(), summary };
}
