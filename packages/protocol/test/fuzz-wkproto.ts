/**
 * Long fuzz run: `npm run fuzz -- [frames=5000000] [seed=1]` in packages/protocol.
 * Prints the totals; exits non-zero on the first broken invariant.
 */
import { runFuzz } from './fuzz-core.ts';

const frames = Number(process.argv[2] ?? 5_000_000);
const seed = Number(process.argv[3] ?? 1);
const batch = 250_000;
const started = Date.now();
for (let done = 0, round = 0; done < frames; done += batch, round++) {
  const stats = runFuzz(seed * 1_000_003 + round, Math.min(batch, frames - done));
  console.log(`seed ${seed} round ${round}: ${JSON.stringify(stats)}`);
}
console.log(`fuzzed ${frames} frames without a crash in ${((Date.now() - started) / 1000).toFixed(1)} s`);
