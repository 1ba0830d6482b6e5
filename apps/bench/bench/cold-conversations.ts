/**
 * Measurement harness for conversations a Parley server meets for the first time (not part of the
 * bench run): a fresh server is warmed with S1 on one set of pairs (the JIT and caches settle, as
 * in S1), then the measured phase sends at the same rate on as many pairs that have never sent:
 * every one of their channels is new to the send path (its permission lists and tail read, its
 * person-channel memberships made) while the rest of the server is warm. What a restart or a wave
 * of new conversations costs on top of S1.
 *   node --conditions=@parley/source --import tsx bench/cold-conversations.ts [PAIRS] [RATE] [SECONDS] [RUNS] [PROTOCOLS]
 * Defaults: 500 pairs, 5000 msg/s, 2 s, 1 run, jsonrpc,wkproto (alternated within each run). Run
 * the built server (`npm run build` first); one JSON line per protocol and run on stdout.
 */
import process from 'node:process';
import { installCleanup } from '../src/children.ts';
import { startParleyDriver } from '../src/drivers/parley.ts';
import { pinSelf } from '../src/pinning.ts';
import { oneToOneUsers, runOneToOne } from '../src/scenarios/one-to-one.ts';
import type { ScenarioResult } from '../src/result.ts';

const args = process.argv.slice(2);
const [pairs = 500, rate = 5000, seconds = 2, runs = 1] = args.slice(0, 4).map(Number);
const protocols = (args[4] ?? 'jsonrpc,wkproto').split(',');
for (const [name, v] of Object.entries({ pairs, rate, seconds, runs })) {
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${name} must be a positive number, got ${v}`);
}
for (const p of protocols) if (p !== 'jsonrpc' && p !== 'wkproto') throw new Error(`protocol must be jsonrpc or wkproto, got "${p}"`);

installCleanup();
pinSelf(1);

const figures = (r: ScenarioResult) => {
  const f = Object.fromEntries(r.figures.map((x) => [x.key, x.value === null ? null : Math.round(x.value * 10) / 10]));
  return {
    p50: f.sendack_p50_ms,
    p99: f.sendack_p99_ms,
    cpuPer1k: f.cpu_ms_per_1k_msgs,
    achieved: f.achieved_rate,
    failedGates: r.gates.filter((g) => !g.ok).map((g) => `${g.name}: ${g.detail}`),
  };
};

for (let run = 1; run <= runs; run++) {
  for (const protocol of run % 2 === 1 ? protocols : [...protocols].reverse()) {
    const driver = await startParleyDriver(protocol as 'jsonrpc' | 'wkproto');
    try {
      await driver.provisionUsers([...oneToOneUsers(pairs, 'warm'), ...oneToOneUsers(pairs, 'cold')]);
      const base = { pairs, rates: [rate], bodyBytes: 64, log: () => undefined, drainMs: 10_000 };
      const [warm] = await runOneToOne(driver, { ...base, phaseSeconds: 3, warmupSeconds: 1, uidPrefix: 'warm' });
      // Their connections open before the phase (runOneToOne connects first); their channels are new.
      const [cold] = await runOneToOne(driver, { ...base, phaseSeconds: seconds, warmupSeconds: 0.05, uidPrefix: 'cold' });
      console.log(JSON.stringify({ run, protocol, pairs, rate, seconds, warm: figures(warm!), newConversations: figures(cold!) }));
    } finally {
      await driver.stop();
    }
  }
}
process.exit(0);
