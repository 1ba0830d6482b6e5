/**
 * S1 — 1:1 online delivery: `pairs` online pairs, sender a → receiver b, one
 * open-loop phase per rate. Figures: sendack and send→recv p50/p99, server CPU
 * ms per 1k messages.
 */
import { PhaseLedgers, type Ledger } from '../ledger.ts';
import { runOpenLoop, type Faults, type Stream } from '../open-loop.ts';
import { achievedGate, fig, generatorGate, ledgerGates, makeResult, type ScenarioResult } from '../result.ts';
import { closeAll, connectAll, serverCpuCounts, type ScenarioOptions } from './common.ts';
import type { Driver } from '../drivers/types.ts';
import { timingCounts } from '../writer-timings.ts';

/** Parameters of S1. */
export interface OneToOneOptions extends ScenarioOptions {
  pairs: number;
  /** Offered rates of the successive phases, messages/s. */
  rates: readonly number[];
  /** Stops after the phase whose result this returns false for (the capacity staircase). */
  continueWhile?: (r: ScenarioResult) => boolean;
  /** Wait for late acks and deliveries after each phase, ms (default 5000). */
  drainMs?: number;
  /** Prefix of the uids (default `s1`), so one server can host several runs. */
  uidPrefix?: string;
  /** Only for the generator's own test. */
  faults?: Faults;
  /** Called around each measured phase (the cluster scenario reads every process's CPU there). */
  onPhase?: (rate: number, at: 'start' | 'end') => void;
}

/** The uids of S1 (senders then receivers), for provisioning. */
export function oneToOneUsers(pairs: number, prefix = 's1'): string[] {
  return Array.from({ length: pairs }, (_, i) => [`${prefix}a${i}`, `${prefix}b${i}`]).flat();
}

/** Runs S1 against a started, provisioned target; one result per rate. */
export async function runOneToOne(driver: Driver, o: OneToOneOptions): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = [];
  const phases = new PhaseLedgers();
  let ledger: Ledger = phases.open('warm');
  const conns = await connectAll(driver, oneToOneUsers(o.pairs, o.uidPrefix), (uid) => phases.recipient(uid));
  const streamsOf = (tag: string): Stream[] => {
    const streams: Stream[] = [];
    for (let i = 0; i < o.pairs; i++) {
      const id = `s1:${tag}:${i}`;
      const [a, b] = [`${o.uidPrefix ?? 's1'}a${i}`, `${o.uidPrefix ?? 's1'}b${i}`];
      ledger.expect(id, [b]);
      streams.push({ id, conn: conns.get(a)!, to: { kind: 'user', id: b } });
    }
    return streams;
  };
  try {
    // Warm-up (not measured): Parley's JIT and caches settle, as they would in production.
    const warm = o.rates[0]!;
    await runOpenLoop({
      serverPid: driver.pid,
      streams: streamsOf('warm'),
      label: 'warm-up',
      rate: warm,
      seconds: o.warmupSeconds,
      ledger,
      bodyBytes: o.bodyBytes,
      drainMs: o.drainMs ?? 10_000,
    });
    for (const [i, rate] of o.rates.entries()) {
      ledger = phases.open(`p${i}`);
      const streams = streamsOf(`p${i}`);
      o.log(`  ${driver.name} S1 @${rate}/s for ${o.phaseSeconds}s`);
      o.onPhase?.(rate, 'start');
      const r = await runOpenLoop({
        serverPid: driver.pid,
        streams,
        rate,
        seconds: o.phaseSeconds,
        ledger,
        bodyBytes: o.bodyBytes,
        drainMs: o.drainMs ?? 5000,
        faults: o.faults,
        timings: driver.writerTimings?.bind(driver),
      });
      o.onPhase?.(rate, 'end');
      const v = ledger.verdict();
      results.push(
        makeResult({
          scenario: `S1@${rate}`,
          title: `S1 1:1 online, ${o.pairs} pairs, ${rate} msg/s`,
          target: driver.name,
          figures: [
            fig('sendack_p50_ms', 'sendack p50', 'ms', r.sendack.percentile(50)),
            fig('sendack_p99_ms', 'sendack p99', 'ms', r.sendack.percentile(99)),
            fig('recv_p50_ms', 'send→recv p50', 'ms', ledger.latency.percentile(50)),
            fig('recv_p99_ms', 'send→recv p99', 'ms', ledger.latency.percentile(99)),
            fig('cpu_ms_per_1k_msgs', 'server CPU per 1k msgs', 'ms', r.acked > 0 ? (r.serverCpuMs * 1000) / r.acked : undefined),
            fig('achieved_rate', 'achieved', 'msg/s', r.achievedRate, 'higher'),
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
        }),
      );
      if (o.continueWhile && !o.continueWhile(results.at(-1)!)) break;
    }
  } finally {
    closeAll(conns);
  }
  return results;
}
