/**
 * The open-loop sender shared by S1, S2 and the capacity staircase: messages
 * are issued on a fixed schedule (rate × elapsed time) whether or not earlier
 * ones were acknowledged, so a slow server shows up as latency and a shortfall
 * in achieved rate instead of silently slowing the generator down.
 */
import { performance } from 'node:perf_hooks';
import type { Ledger } from './ledger.ts';
import { encodeBody } from './ledger.ts';
import { startCpuMeter } from './proc-stats.ts';
import { Samples, sleep } from './stats.ts';
import type { Connection, Destination } from './drivers/types.ts';
import { timingsBetween, type WriterReading } from './writer-timings.ts';

/** One stream: a sender connection sending in order to one destination. */
export interface Stream {
  id: string;
  conn: Connection;
  to: Destination;
}

/** Deliberate faults, only for testing the ledger: counted as sent but never sent / sent twice. */
export interface Faults {
  /** The k-th issued message (0-based) is recorded in the ledger but not sent. */
  dropAt?: number;
  /** The k-th issued message (0-based) is sent twice with the same body. */
  duplicateAt?: number;
}

/** Parameters of one open-loop phase. */
export interface OpenLoopOptions {
  serverPid: number;
  streams: readonly Stream[];
  /** Messages per second over all streams. */
  rate: number;
  seconds: number;
  ledger: Ledger;
  /** Payload size in bytes (bodies are padded). */
  bodyBytes: number;
  /** How long to wait for the last acks and deliveries after the send window, ms. */
  drainMs: number;
  faults?: Faults;
  /** What the phase is called where `--perf` lists the measured phases (default: the rate, e.g. `5000 msg/s`). */
  label?: string;
  /** Reads the server's store writer's commits and pauses (`Driver.writerTimings`): read outside the CPU window, before and after. */
  timings?: () => Promise<WriterReading | undefined>;
}

/** What one phase measured. */
export interface OpenLoopResult {
  offered: number;
  acked: number;
  failed: number;
  /** Acknowledged messages per second over the send window (or until the last ack, if later). */
  achievedRate: number;
  sendack: Samples;
  serverCpuMs: number;
  generatorCpuMs: number;
  wallMs: number;
  /** Run-queue wait of the server's and the generator's main threads, ms (noise from other processes). */
  serverWaitMs: number;
  generatorWaitMs: number;
  /** The server's CPU by kind (user, sys, per thread group), ms. */
  serverBreakdownMs: Record<string, number>;
  /** First error of a refused or failed send, if any. */
  firstError?: string;
  /** The store writer's commits, and its pauses by reason, during the phase and its drain (with `timings`). */
  writerTimings?: WriterReading | undefined;
}

/** Runs one phase: sends at `rate` for `seconds`, then waits for acks and deliveries (at most `drainMs`). */
export async function runOpenLoop(o: OpenLoopOptions): Promise<OpenLoopResult> {
  const sendack = new Samples();
  const offered = Math.round(o.rate * o.seconds);
  let issued = 0;
  let acked = 0;
  let failed = 0;
  let lastAckAt = 0;
  let firstError: string | undefined;
  // A diagnostic: a failed read leaves the phase without it, never fails the phase.
  const readTimings = () => o.timings?.().catch(() => undefined);
  const timingsBefore = await readTimings();
  const meter = startCpuMeter(o.serverPid, o.label ?? `${o.rate} msg/s`);
  const start = performance.now();
  const sendOne = (s: Stream, body: string): void => {
    const t0 = performance.now();
    s.conn.send(s.to, body).then(
      () => {
        const t1 = performance.now();
        sendack.add(t1 - t0);
        acked++;
        lastAckAt = t1;
      },
      (e: Error) => {
        failed++;
        firstError ??= e.message;
      },
    );
  };
  while (issued < offered) {
    const elapsed = (performance.now() - start) / 1000;
    if (elapsed > o.seconds * 3) break; // the generator itself cannot keep up: stop, the gate will say so
    const due = Math.min(offered, Math.floor(o.rate * elapsed) + 1);
    for (; issued < due; issued++) {
      const s = o.streams[issued % o.streams.length]!;
      const n = o.ledger.next(s.id);
      const body = encodeBody(s.id, n, performance.now(), o.bodyBytes);
      if (o.faults?.dropAt === issued) continue;
      sendOne(s, body);
      if (o.faults?.duplicateAt === issued) sendOne(s, body);
    }
    await sleep(1);
  }
  const sent =
    issued +
    (o.faults?.duplicateAt !== undefined && o.faults.duplicateAt < issued ? 1 : 0) -
    (o.faults?.dropAt !== undefined && o.faults.dropAt < issued ? 1 : 0);
  const deadline = performance.now() + o.drainMs;
  while (performance.now() < deadline && (acked + failed < sent || o.ledger.receivedDeliveries < o.ledger.expectedDeliveries))
    await sleep(5);
  const cpu = meter.read();
  const writerTimings = o.timings ? timingsBetween(timingsBefore, await readTimings()) : undefined;
  const windowMs = Math.max(o.seconds * 1000, lastAckAt - start);
  return {
    offered,
    acked,
    failed,
    achievedRate: (acked * 1000) / windowMs,
    sendack,
    serverCpuMs: cpu.serverMs,
    generatorCpuMs: cpu.generatorMs,
    wallMs: cpu.wallMs,
    serverWaitMs: cpu.serverWaitMs,
    generatorWaitMs: cpu.generatorWaitMs,
    serverBreakdownMs: cpu.serverBreakdownMs,
    firstError,
    writerTimings,
  };
}
