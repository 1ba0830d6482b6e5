import { describe, expect, it } from 'vitest';
import { highestHeld, ONE_TO_ONE_STEPS, stepLine, stepSummary } from '../src/capacity.ts';
import { achievedGate, fig, generatorGate, makeResult, type ScenarioResult } from '../src/result.ts';

/** A 1:1 step as runOneToOne reports it: `cpuMs` of server CPU and `generatorMs` of the generator's over 3 s. */
function step(rate: number, p99: number, cpuMs: number, generatorMs: number, waitMs = 0): ScenarioResult {
  const acked = rate * 3;
  return makeResult({
    scenario: `S1@${rate}`,
    title: `S1 @${rate}`,
    target: 'parley-jsonrpc',
    figures: [
      fig('sendack_p99_ms', 'sendack p99', 'ms', p99),
      fig('cpu_ms_per_1k_msgs', 'server CPU per 1k msgs', 'ms', (cpuMs * 1000) / acked),
    ],
    gates: [generatorGate(generatorMs, 3000), achievedGate(rate, rate, 'msg/s')],
    counts: { acked, serverCpuMs: cpuMs, generatorCpuMs: generatorMs, wallMs: 3000, serverWaitMs: waitMs },
  });
}

describe('the staircase', () => {
  it('records how busy each side was at every step', () => {
    const s = stepSummary(step(8000, 56.5, 2640, 1770, 606.4));
    expect(s).toEqual({
      scenario: 'S1@8000',
      valid: true,
      error: undefined,
      sendackP99Ms: 56.5,
      failedGates: [],
      serverCpuMsPer1k: 110,
      serverCores: 0.88,
      serverWaitMs: 606,
      generatorCores: 0.59,
      storeCommits: null,
      writerPauses: null,
    });
    expect(stepLine(s)).toBe(
      '  S1@8000: sendack p99 56.5 ms, server 110.0 ms per 1k, 0.88 of a core (main thread waited 606 ms), generator 0.59 of a core',
    );
  });

  it("puts the store writer's commits, and its pauses of every reason summed, into the step's line", () => {
    const r = step(10000, 53.9, 2150, 1380, 374);
    Object.assign(r.counts, {
      storeCommits: 1102,
      storeCommitMs: 2203.4,
      storeCommitsOver20ms: 4,
      'writerPauses:wal_restart': 2,
      'writerPauseMs:wal_restart': 41.6,
      'writerPausesOver20ms:wal_restart': 1,
      'writerPauses:marks': 3,
      'writerPauseMs:marks': 22.3,
      'writerPausesOver20ms:marks': 0,
    });
    const s = stepSummary(r);
    expect(s.storeCommits).toEqual({ count: 1102, ms: 2203, over20ms: 4 });
    expect(s.writerPauses).toEqual({ count: 5, ms: 64, over20ms: 1 });
    expect(stepLine(s)).toBe(
      '  S1@10000: sendack p99 53.9 ms, server 71.7 ms per 1k, 0.72 of a core (main thread waited 374 ms), generator 0.46 of a core,' +
        ' store committed 1102 batches (4 over 20 ms), writer paused 5× for 64 ms (1 over 20 ms)',
    );
  });

  it('names the failed gate of an invalid step', () => {
    const s = stepSummary(step(10000, 319.9, 2880, 2160));
    expect(s.valid).toBe(false);
    expect(s.generatorCores).toBe(0.72);
    expect(s.failedGates).toEqual(['generator-cpu: 72% of a core (max 70%)']);
    expect(stepLine(s)).toMatch(/; failed: generator-cpu: 72% of a core \(max 70%\)$/);
  });

  it('has no loads for a target that could not run', () => {
    const s = stepSummary(
      makeResult({
        scenario: 'capacity',
        title: 'capacity',
        target: 'parley-jsonrpc',
        figures: [],
        gates: [],
        counts: {},
        error: 'no port',
      }),
    );
    expect(s).toMatchObject({
      valid: false,
      sendackP99Ms: null,
      serverCpuMsPer1k: null,
      serverCores: null,
      serverWaitMs: null,
      generatorCores: null,
    });
    expect(stepLine(s)).toMatch(/server — ms per 1k, — of a core .*; error: no port$/);
  });

  it('holds a step only when both of its runs held, and climbs no further than the first miss', () => {
    const held = (rate: number) => [step(rate, 10, 1000, 1000), step(rate, 12, 1000, 1000)];
    expect(highestHeld([...held(2000), ...held(4000), step(6000, 10, 1000, 1000), step(6000, 51, 1000, 1000)], ONE_TO_ONE_STEPS)).toBe(
      4000,
    );
    // A generator over its gate is a miss, whatever the latency.
    expect(highestHeld([...held(2000), step(4000, 10, 1000, 2200), step(4000, 10, 1000, 1000)], ONE_TO_ONE_STEPS)).toBe(2000);
    expect(highestHeld([step(2000, 60, 1000, 1000)], ONE_TO_ONE_STEPS)).toBe(0);
  });
});
