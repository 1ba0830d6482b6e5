/**
 * The calibration loop as a target, over the generator's own WebSocket client:
 * a short S1 against the real loop (the shared folder's `tools/ref-im`) is
 * valid, every message acknowledged and delivered once, in order. Without the
 * shared folder the test is skipped; under CI (`CI=true`) that fails instead.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixturesRequired } from '../../../test-support/fixtures.ts';
import { installCleanup } from '../src/children.ts';
import { DEFAULT_REF_IM_DIR, startRefImDriver } from '../src/drivers/ref-im.ts';
import { oneToOneUsers } from '../src/scenarios/one-to-one.ts';
import type { Driver } from '../src/drivers/types.ts';
import { SHORT_RUN_PAIRS, shortOneToOne } from './short-run.ts';

const present = existsSync(join(DEFAULT_REF_IM_DIR, 'ref-im-server.mjs'));
if (!present && fixturesRequired) throw new Error(`the calibration loop is missing at ${DEFAULT_REF_IM_DIR}; CI=true requires it`);

describe.skipIf(!present)('the calibration loop as a target', () => {
  let driver: Driver;

  beforeAll(async () => {
    installCleanup();
    driver = await startRefImDriver(DEFAULT_REF_IM_DIR);
  }, 30_000);

  afterAll(async () => {
    await driver?.stop();
  });

  it('runs a short S1 with every gate holding', async () => {
    await driver.provisionUsers(oneToOneUsers(SHORT_RUN_PAIRS, 'loop'));
    const [r] = await shortOneToOne(driver, 'loop');
    expect(r!.counts).toMatchObject({ offered: 40, acked: 40, deliveries: 40, lost: 0, duplicates: 0, outOfOrder: 0 });
    expect(r!.gates.filter((g) => !g.ok)).toEqual([]);
    expect(r!.valid).toBe(true);
  }, 30_000);
});
