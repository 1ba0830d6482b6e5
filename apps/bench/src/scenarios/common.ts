/** Helpers shared by the scenarios: connecting many users and closing them. */
import { pool } from '../stats.ts';
import type { Connection, Deliveries, Driver } from '../drivers/types.ts';

/** Connections opened at once while setting a scenario up. */
export const SETUP_CONCURRENCY = 50;

/** Connects every uid (its deliveries go to `deliveriesOf(uid)`); returns connections by uid. */
export async function connectAll(
  driver: Pick<Driver, 'connect'>,
  uids: readonly string[],
  deliveriesOf: (uid: string) => Deliveries,
): Promise<Map<string, Connection>> {
  const conns = new Map<string, Connection>();
  try {
    await pool(uids, SETUP_CONCURRENCY, async (uid) => {
      conns.set(uid, await driver.connect(uid, deliveriesOf(uid)));
    });
  } catch (e) {
    closeAll(conns);
    throw e;
  }
  return conns;
}

/** Closes every connection. */
export function closeAll(conns: Map<string, Connection>): void {
  for (const c of conns.values()) c.close();
}

/** Options every scenario reads. */
export interface ScenarioOptions {
  /** Seconds of each measured open-loop phase. */
  phaseSeconds: number;
  /** Seconds of the unmeasured warm-up before the first open-loop phase. */
  warmupSeconds: number;
  /** Payload bytes per message. */
  bodyBytes: number;
  log: (line: string) => void;
}

/** The server's CPU breakdown as result counts (`serverCpu.user`, `serverCpu.thread:main`, …), ms. */
export function serverCpuCounts(breakdown: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(breakdown).map(([k, v]) => [`serverCpu.${k}`, v]));
}

/** The generator's CPU breakdown as result counts (`generatorCpu.thread:main`, …), ms. */
export function generatorCpuCounts(breakdown: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(breakdown).map(([k, v]) => [`generatorCpu.${k}`, v]));
}
