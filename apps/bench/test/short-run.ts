/**
 * The short S1 the bench's e2e tests run against a real target: `pairs` pairs
 * at 40 msg/s for one second after a 0.2 s warm-up, `faults` injected when given.
 */
import { runOneToOne } from '../src/scenarios/one-to-one.ts';
import type { Driver } from '../src/drivers/types.ts';
import type { Faults } from '../src/open-loop.ts';

export const SHORT_RUN_PAIRS = 4;

/** Runs the short S1 with the users of `uidPrefix` (`oneToOneUsers(SHORT_RUN_PAIRS, uidPrefix)`). */
export function shortOneToOne(driver: Driver, uidPrefix: string, faults?: Faults) {
  return runOneToOne(driver, {
    pairs: SHORT_RUN_PAIRS,
    rates: [40],
    phaseSeconds: 1,
    warmupSeconds: 0.2,
    bodyBytes: 32,
    log: () => undefined,
    drainMs: 1500,
    uidPrefix,
    faults,
  });
}
