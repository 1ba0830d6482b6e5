import process from 'node:process';
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay, performance, type EventLoopUtilization, type IntervalHistogram } from 'node:perf_hooks';

/** Process figures taken on one collector tick. */
export interface RuntimeReading {
  /** Cumulative user + system CPU time, µs. */
  cpuMicros: number;
  rssBytes: number;
  /** Virtual size (VmSize), bytes; 0 where /proc is unavailable. */
  vmsBytes: number;
  heapUsedBytes: number;
  /** Active libuv handles and requests: Node's stand-in for goroutines. */
  activeResources: number;
  /** Event-loop delay since the previous tick, 99th percentile and max, ms. */
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
  /** Event-loop utilization since the previous tick, 0..1. */
  loopUtilization: number;
}

function vmSizeBytes(): number {
  try {
    const m = /^VmSize:\s+(\d+)\s+kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * Shortest interval event-loop utilization is computed over, ms. Over a
 * shorter one (the sample taken the moment the collector starts, or rise
 * samples close together) the loop has had no chance to be idle and reads
 * as fully busy; the previous figure is reported instead.
 */
const MIN_UTILIZATION_WINDOW_MS = 100;

/**
 * Reads CPU, memory, event-loop delay and utilization and active resources.
 * Delay and utilization are per interval: each `read()` reports what happened
 * since the previous one.
 */
export class RuntimeSampler {
  private readonly delay: IntervalHistogram = monitorEventLoopDelay({ resolution: 10 });
  private lastElu: EventLoopUtilization = performance.eventLoopUtilization();
  private lastUtilization = 0;

  /** Starts measuring from now: start-up work before this is not the running node's load. */
  start(): void {
    this.lastElu = performance.eventLoopUtilization();
    this.lastUtilization = 0;
    this.delay.reset();
    this.delay.enable();
  }

  stop(): void {
    this.delay.disable();
  }

  read(): RuntimeReading {
    const cpu = process.cpuUsage();
    const mem = process.memoryUsage();
    const elu = performance.eventLoopUtilization(this.lastElu);
    if (elu.idle + elu.active >= MIN_UTILIZATION_WINDOW_MS) {
      this.lastElu = performance.eventLoopUtilization();
      this.lastUtilization = elu.utilization;
    }
    const hasDelay = this.delay.count > 0;
    const reading: RuntimeReading = {
      cpuMicros: cpu.user + cpu.system,
      rssBytes: mem.rss,
      vmsBytes: vmSizeBytes(),
      heapUsedBytes: mem.heapUsed,
      activeResources: process.getActiveResourcesInfo().length,
      loopDelayP99Ms: hasDelay ? this.delay.percentile(99) / 1e6 : 0,
      loopDelayMaxMs: hasDelay ? this.delay.max / 1e6 : 0,
      loopUtilization: this.lastUtilization,
    };
    this.delay.reset();
    return reading;
  }
}
