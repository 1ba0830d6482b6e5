import type { Repositories } from './repositories/index.ts';
import type { WriteHealth } from './sqlite/write-health.ts';
import type { WriterTimings } from './sqlite/writer-timings.ts';

/** Every repository over one database connection, with the probes readiness needs. */
export interface Store extends Repositories {
  /** Cheap round trip proving the connection works (for readiness). */
  ping(): Promise<void>;
  /**
   * Proves the store can commit: takes the write lock every time (waiting at
   * most `waitMs`, so readiness answers quickly while another process holds
   * it) and, at most once per second or on every call while writes are
   * failing, also commits a one-row write (a full disk or a read-only file
   * only shows when something is written). Rejects with the cause.
   */
  probeWrite(waitMs: number): Promise<void>;
  /** Whether writes currently fail, and why (logged once per kind). */
  health: WriteHealth;
  /** The embedded store only: whether its writer thread gathers each commit's WAL frames into one write, and why. */
  walBuffer?: { on: boolean; reason: string };
  /** The embedded store only: its writer thread's commits' durations, and its pauses beside them (WAL restarts, marks) while batches waited. */
  writerTimings?: WriterTimings;
  /** The embedded store only: whether SQLite is the build with Parley's page-cache change (`@parley/sqlite-build`). */
  sqlitePatched?: boolean;
  close(): Promise<void>;
}
