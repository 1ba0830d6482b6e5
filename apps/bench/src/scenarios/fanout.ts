/**
 * S2 — group fan-out: `groups` groups of `members` online receivers each and
 * one publisher per group (a member that sends and receives nothing), open
 * loop at `rate` group messages/s in total. Figures: send→recv p50/p99,
 * server CPU ms per 1k deliveries.
 */
import { PhaseLedgers, type Ledger } from '../ledger.ts';
import { runOpenLoop, type Stream } from '../open-loop.ts';
import { achievedGate, fig, generatorGate, ledgerGates, makeResult, type ScenarioResult } from '../result.ts';
import { closeAll, connectAll, serverCpuCounts, type ScenarioOptions } from './common.ts';
import type { Driver } from '../drivers/types.ts';
import { timingCounts } from '../writer-timings.ts';

/** Parameters of S2. */
export interface FanoutOptions extends ScenarioOptions {
  groups: number;
  members: number;
  /** Group messages per second over all groups, one measured phase per rate. */
  rates: readonly number[];
  /** Stops after the phase whose result this returns false for (the capacity staircase). */
  continueWhile?: (r: ScenarioResult) => boolean;
}

const memberOf = (g: number, m: number): string => `s2g${g}m${m}`;
const publisherOf = (g: number): string => `s2g${g}pub`;

/** The uids of S2 (publishers and members). */
export function fanoutUsers(groups: number, members: number): string[] {
  return Array.from({ length: groups }, (_, g) => [publisherOf(g), ...Array.from({ length: members }, (_, m) => memberOf(g, m))]).flat();
}

/** Creates the groups, connects everyone and runs one open-loop phase per rate. */
export async function runFanout(driver: Driver, o: FanoutOptions): Promise<ScenarioResult[]> {
  const phases = new PhaseLedgers();
  let ledger: Ledger = phases.open('warm');
  const membersOf = (g: number): string[] => Array.from({ length: o.members }, (_, m) => memberOf(g, m));
  for (let g = 0; g < o.groups; g++) await driver.createGroup(`s2g${g}`, membersOf(g), [publisherOf(g)]);
  const conns = await connectAll(driver, fanoutUsers(o.groups, o.members), (uid) => phases.recipient(uid));
  const streamsOf = (tag: string): Stream[] =>
    Array.from({ length: o.groups }, (_, g) => {
      ledger.expect(`s2:${tag}:${g}`, membersOf(g));
      return { id: `s2:${tag}:${g}`, conn: conns.get(publisherOf(g))!, to: { kind: 'group' as const, id: `s2g${g}` } };
    });
  try {
    // Warm-up (not measured), as in S1.
    await runOpenLoop({
      serverPid: driver.pid,
      streams: streamsOf('warm'),
      label: 'warm-up',
      rate: o.rates[0]!,
      seconds: o.warmupSeconds,
      ledger,
      bodyBytes: o.bodyBytes,
      drainMs: 10_000,
    });
    const results: ScenarioResult[] = [];
    for (const [i, rate] of o.rates.entries()) {
      ledger = phases.open(`p${i}`);
      const streams = streamsOf(`p${i}`);
      o.log(`  ${driver.name} S2 ${o.groups}×${o.members} @${rate}/s for ${o.phaseSeconds}s`);
      const r = await runOpenLoop({
        serverPid: driver.pid,
        streams,
        rate,
        seconds: o.phaseSeconds,
        ledger,
        bodyBytes: o.bodyBytes,
        drainMs: 8000,
        timings: driver.writerTimings?.bind(driver),
      });
      const v = ledger.verdict();
      const result = makeResult({
        scenario: o.rates.length > 1 ? `S2@${rate}` : 'S2',
        title: `S2 group fan-out, ${o.groups} groups × ${o.members} members, ${rate} msg/s`,
        target: driver.name,
        figures: [
          fig('sendack_p99_ms', 'sendack p99', 'ms', r.sendack.percentile(99)),
          fig('recv_p50_ms', 'send→recv p50', 'ms', ledger.latency.percentile(50)),
          fig('recv_p99_ms', 'send→recv p99', 'ms', ledger.latency.percentile(99)),
          fig(
            'cpu_ms_per_1k_deliveries',
            'server CPU per 1k deliveries',
            'ms',
            v.received > 0 ? (r.serverCpuMs * 1000) / v.received : undefined,
          ),
          fig('deliveries_per_s', 'deliveries/s', '1/s', (v.received * 1000) / r.wallMs, 'higher'),
        ],
        gates: [
          generatorGate(r.generatorCpuMs, r.wallMs),
          achievedGate(r.achievedRate, rate, 'msg/s'),
          ...ledgerGates(v),
          ...(r.failed > 0 ? [{ name: 'send-errors', ok: false, detail: `${r.failed} sends failed: ${r.firstError}` }] : []),
        ],
        counts: {
          offered: r.offered,
          acked: r.acked,
          failed: r.failed,
          deliveries: v.received,
          expectedDeliveries: v.expected,
          lost: v.lost,
          duplicates: v.duplicates,
          outOfOrder: v.outOfOrder,
          serverCpuMs: r.serverCpuMs,
          generatorCpuMs: r.generatorCpuMs,
          wallMs: r.wallMs,
          serverWaitMs: r.serverWaitMs,
          generatorWaitMs: r.generatorWaitMs,
          ...serverCpuCounts(r.serverBreakdownMs),
          ...timingCounts(r.writerTimings),
        },
      });
      results.push(result);
      if (o.continueWhile && !o.continueWhile(result)) break;
    }
    return results;
  } finally {
    closeAll(conns);
  }
}
