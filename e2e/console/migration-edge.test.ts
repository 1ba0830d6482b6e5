import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, openConsole, TestConsole } from './harness.ts';
import { copyFixtures, gotoStep, runStage, shot, shotWindow } from './wizard.ts';

const tmp = copyFixtures('edge-closed');

/**
 * edge-closed blocks under the strict default. The operator writes the plan
 * in the JSON view, diagnose shows the blockers as cards, each card's plan
 * change is accepted, the diff reviewed and saved as a new plan, and that
 * plan runs through every stage (export-map included, since it renumbers) to
 * offline_verified with every cross-report check passed.
 */
describe.runIf(tmp !== undefined)('migration wizard: edge-closed blockers turned into policies from the blocker cards', () => {
  const root = join(tmp ?? '', 'root');
  let browser: Browser;
  let console_: TestConsole;
  let page: Page;

  beforeAll(async () => {
    console_ = await new TestConsole([], ['--migration-root', root]).start();
    browser = await launchChromium();
    page = await openConsole(browser, console_, 'en-US', '/migration/plan');
  });
  afterAll(async () => {
    await browser?.close();
    await console_?.stop();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('shows the blockers, turns each into its plan change, and reaches offline_verified on the new plan', async () => {
    const plan = {
      version: 1,
      sources: [{ node_id: 1, data_dir: join(tmp!, 'v2-edge-closed'), shard_count: 8 }],
      target: {
        cluster_id: 'parley-edge',
        created_at: '2026-05-01T00:00:00Z',
        slot_count: 12,
        hash_slot_count: 256,
        replicas: 2,
        channel_replicas: 1,
        nodes: [{ node_id: 7, addr: '127.0.0.1:11110', data_dir: join(tmp!, 'targets', 'node-7') }],
      },
    };
    await page.click('[data-testid="tab-json"]');
    await page.fill('[data-testid="plan-json"]', JSON.stringify(plan, null, 2));
    // validated live by the plan schema's rules: two replicas on one node is refused, at its field
    await page.waitForSelector('[data-testid="plan-validity"][data-valid="false"]');
    await page.click('[data-testid="tab-form"]');
    const replicas = page.locator('[data-pointer="/target/replicas"]');
    expect(await replicas.getAttribute('aria-invalid')).toBe('true');
    await shot(page, 'wizard-edge-01-plan-problem');
    await replicas.fill('1');
    await page.waitForSelector('[data-testid="plan-validity"][data-valid="true"]');
    await page.click('[data-testid="save-plan"]');
    await page.waitForSelector('[data-testid="plan-saved"]');

    expect(await runStage(page, 'diagnose', 'wizard-edge-02-diagnose')).toBe('blocked');
    const cards = page.locator('[data-testid^="blocker-"]');
    expect(await cards.count()).toBe(4);
    expect((await cards.evaluateAll((els) => els.map((e) => e.getAttribute('data-code')))).sort()).toEqual([
      'duplicate_client_msg_no',
      'duplicate_message_id',
      'unresolved_allowlist_channel',
      'unresolved_allowlist_channel',
    ]);
    // a quarantine entry pre-filled from the row the blocker found
    expect(await page.locator('[data-testid="blocker-0"] [data-change="quarantine"]').innerText()).toMatch(/message_id_clash/);
    // accepted in an order of the operator's choosing, not the report's
    for (const i of [3, 1, 0, 2]) await page.click(`[data-testid="accept-blocker-${i}"]`);
    await page.click('[data-testid="review-changes"]');
    await page.waitForSelector('[data-testid="plan-diff"]');
    const added = await page.locator('[data-testid="plan-diff"] [data-diff="add"]').allInnerTexts();
    expect(added.join('\n')).toMatch(/"keep_latest_duplicates": true/);
    expect(added.join('\n')).toMatch(/"compact_sequences": true/);
    expect(added.filter((l) => l.includes('"reason"'))).toHaveLength(3);
    await shotWindow(page, 'wizard-edge-03-diff');
    await page.click('[data-testid="save-new-plan"]');
    await page.waitForSelector('[data-testid="plan-select"]');
    await expect.poll(() => page.inputValue('[data-testid="plan-select"]')).toBe('plan-2');

    // the new plan starts afresh in its own folder; nothing blocks it any more
    expect(await runStage(page, 'diagnose', 'wizard-edge-04-diagnose-again')).toBe('succeeded');
    expect(await runStage(page, 'prepare', 'wizard-edge-05-prepare')).toBe('succeeded');
    expect(await page.locator('[data-testid="report-prepare"] [data-fact="excluded"]').innerText()).toMatch(/4/);
    for (const stage of ['export', 'import', 'verify']) expect(await runStage(page, stage, `wizard-edge-06-${stage}`)).toBe('succeeded');
    expect(await page.getAttribute('[data-testid="report-verify"]', 'data-status')).toBe('offline_verified');
    expect(await page.locator('[data-testid="report-verify"] [data-fact="verified_message_replicas"]').innerText()).toMatch(/478/);
    // renumbered: export-map rebuilds the mapping, and the cross checks want it
    await gotoStep(page, 'verify');
    await page.waitForSelector('[data-check="sequence_mapping"][data-state="pending"]');
    expect(await runStage(page, 'export-map', 'wizard-edge-07-export-map')).toBe('succeeded');
    await gotoStep(page, 'verify');
    await page.waitForSelector('[data-check="sequence_mapping"][data-state="pass"]');
    expect(await page.locator('[data-testid="cross-checks"] [data-state="pass"]').count()).toBe(9);
    await shot(page, 'wizard-edge-08-verified');
    // the acceptance checklist knows this plan renumbers
    await page.click('[data-step-link="accept"]');
    expect(await page.getAttribute('[data-testid="item-renumbering"]', 'data-applicable')).toBe('true');
    await page.waitForSelector('[data-testid="item-offline_verified"][data-done="true"]');
  }, 180_000);
});
