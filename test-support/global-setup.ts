import { fixturesRequired, missingFixtureDirs, missingFixturesMessage } from './fixtures.ts';

/**
 * Runs once before the whole test run (root `vitest.config.ts`): a missing
 * fixtures folder fails the run under CI, and is said once otherwise.
 */
export default function checkFixtures(): void {
  const missing = missingFixtureDirs();
  if (missing.length === 0) return;
  if (fixturesRequired) throw new Error(missingFixturesMessage(missing));
  process.stderr.write(`\n${missingFixturesMessage(missing)}.\n\n`);
}
