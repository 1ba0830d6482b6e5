import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, openConsole, TestConsole, TestNode, visibleText } from './harness.ts';
import { checkItem, copyFixtures, fillAndSavePlan, gotoStep, runStage, serverCommit, shot, tick, untranslated } from './wizard.ts';

const tmp = copyFixtures('basic-closed');

/**
 * An operator migrates basic-closed with the wizard of a real `parleyctl
 * console`: preflight, the plan by its form, every stage run as parleyctl,
 * the reports and their cross checks, a server started on the target, the
 * acceptance checklist proven by live checks and ticked by hand, surviving a
 * reload and a restart of the console, and exported as Markdown.
 */
describe.runIf(tmp !== undefined)('migration wizard: basic-closed from preflight to offline_verified and acceptance', () => {
  const root = join(tmp ?? '', 'root');
  const target = join(tmp ?? '', 'targets', 'node-7');
  let browser: Browser;
  let console_: TestConsole;
  let page: Page;
  let server: TestNode | undefined;

  beforeAll(async () => {
    console_ = await new TestConsole([], ['--migration-root', root]).start();
    browser = await launchChromium();
    page = await openConsole(browser, console_, 'en-US', '/migration/preflight');
  });
  afterAll(async () => {
    await server?.dispose();
    await browser?.close();
    await console_?.stop();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('walks preflight, plan and every stage to offline_verified', async () => {
    await page.waitForSelector('[data-testid="preflight"]');
    expect(await page.textContent('[data-testid="migration-root"]')).toBe(root);
    await page.fill('[data-testid="operator"]', 'Ada Ops');
    for (const item of ['writers_stopped', 'auto_restart_off', 'v3_new_empty', 'baseline', 'space_sized', 'os_locking', 'plugins_match'])
      await tick(page, item);
    await page.fill('[data-testid="target-commit"]', serverCommit());
    await page.click('[data-testid="save-commit"]');
    await checkItem(page, 'tool');
    await shot(page, 'wizard-01-preflight');

    const planId = await fillAndSavePlan(page, { source: join(tmp!, 'v2-basic-closed'), target, cluster: 'parley-wizard' });
    expect(planId).toBe('plan-1');
    await shot(page, 'wizard-02-plan');
    await gotoStep(page, 'preflight');
    await checkItem(page, 'sources');
    expect(await page.locator('[data-testid="item-sources"]').innerText()).toMatch(/8 shards, Pebble format 14, 8 LOCK files, none held/);

    expect(await runStage(page, 'diagnose', 'wizard-03-diagnose')).toBe('succeeded');
    expect(await runStage(page, 'prepare', 'wizard-04-prepare')).toBe('succeeded');
    // the live log shows the stage's own progress lines
    expect(await page.locator('[data-testid="run-log"]').innerText()).toMatch(/prepare: node 1 shard 8\/8/);
    expect(await runStage(page, 'export', 'wizard-05-export')).toBe('succeeded');
    expect(await runStage(page, 'import', 'wizard-06-import')).toBe('succeeded');
    expect(await runStage(page, 'verify', 'wizard-07-verify')).toBe('succeeded');
    expect(await page.getAttribute('[data-testid="report-verify"]', 'data-status')).toBe('offline_verified');
    await page.waitForSelector('[data-testid="cross-checks"] [data-check="message_replicas"][data-state="pass"]');
    expect(await page.locator('[data-testid="cross-checks"] [data-state="pass"]').count()).toBe(8);
    expect(await page.locator('[data-testid="cross-checks"] [data-state="fail"]').count()).toBe(0);
    await shot(page, 'wizard-07-verify');
    // export-map is not needed without compact_sequences
    expect(await page.getAttribute('[data-step-link="export-map"]', 'data-step-state')).toBe('optional');

    await page.click('[data-nav="/migration/reports"]');
    await page.waitForSelector('[data-testid="report-viewer"]');
    await page.click('[data-report^="prepare-"]');
    await page.waitForSelector('[data-testid="report-viewer"][data-file^="prepare-"]');
    await shot(page, 'wizard-08-reports');
  }, 180_000);

  it('proves the acceptance items with a server started on the target, and keeps the ticks across a reload and a restart', async () => {
    server = await new TestNode({
      id: 7,
      name: 'target-7',
      dataDir: target,
      debug: true,
      env: { PARLEY_CLUSTER_ID: 'parley-wizard' },
    }).start();
    await page.click('[data-nav="/migration/accept"]');
    await page.waitForSelector('[data-testid="acceptance"]');
    await page.waitForSelector('[data-testid="item-offline_verified"][data-done="true"]');
    await page.fill('[data-testid="api-url-7"]', server.api);
    await page.fill('[data-testid="gateway-7"]', server.ws);
    await page.click('[data-testid="save-nodes"]');
    await checkItem(page, 'readyz');
    await checkItem(page, 'config');
    await checkItem(page, 'token');
    const token = await page.locator('[data-testid="item-token"]').innerText();
    expect(token).toMatch(/connected with its original token/);
    expect(token).toMatch(/a wrong token was refused/);
    await tick(page, 'copy', 'rsync -a --checksum --dry-run: no differences');
    expect(await page.getAttribute('[data-testid="item-three_nodes"]', 'data-applicable')).toBe('false');
    expect(await page.getAttribute('[data-testid="item-renumbering"]', 'data-applicable')).toBe('false');
    // cutover stays closed until every applicable item is done; rollback guidance beside it
    expect(await page.locator('[data-testid="tick-cutover"]').isDisabled()).toBe(true);
    await page.locator('[data-testid="rollback"]').getByText('No', { exact: true }).click();
    await page.waitForSelector('[data-testid="rollback-row"]');
    await shot(page, 'wizard-09-acceptance');

    await page.reload();
    await page.waitForSelector('[data-testid="item-copy"][data-done="true"]');
    // each item's state arrives with its own request after a reload: wait for every one of them
    for (const item of ['offline_verified', 'readyz', 'config', 'token'])
      await page.waitForSelector(`[data-testid="item-${item}"][data-done="true"]`, { timeout: 15_000 });
    expect(await page.locator('[data-testid="item-copy"]').innerText()).toMatch(/Ada Ops/);

    const download = page.waitForEvent('download');
    await page.click('[data-testid="export-md"]');
    const md = readFileSync((await (await download).path())!, 'utf8');
    expect(md).toMatch(/^# Parley migration sign-off: plan-1 \(cluster parley-wizard\)/);
    expect(md).toMatch(/- \[x\] \*\*1\.\*\* .*ticked by Ada Ops/);
    expect(md).toMatch(/- \[x\] \*\*3a\.\*\* .*proven by a live check/);
    expect(md).toMatch(/- \[-\] \*\*4\.\*\*/);
    expect(md).toMatch(/- \[ \] \*\*7\.\*\*/);
    expect(md).toContain('/readyz 200');

    // a restart of the console: a new launch, the same root, everything still there
    await console_.stop();
    console_ = await new TestConsole([], ['--migration-root', root]).start();
    await page.close();
    page = await openConsole(browser, console_, 'en-US', '/migration/accept');
    await page.waitForSelector('[data-testid="item-copy"][data-done="true"]');
    await page.waitForSelector('[data-testid="item-token"][data-done="true"]', { timeout: 15_000 });
    expect(await page.getAttribute('[data-testid="rollback"]', 'data-writes')).toBe('no');
    await shot(page, 'wizard-10-after-restart');
  }, 120_000);

  it('speaks Simplified Chinese on every step, leaving only identifiers as they are', async () => {
    const zh = await openConsole(browser, console_, 'zh-CN', '/migration/preflight');
    try {
      for (const [path, ready] of [
        ['/migration/preflight?plan=plan-1', '[data-testid="item-tool"][data-done="true"]'],
        ['/migration/plan?plan=plan-1', '[data-testid="plan-form"]'],
        ['/migration/prepare?plan=plan-1', '[data-testid="report-prepare"]'],
        ['/migration/verify?plan=plan-1', '[data-testid="cross-checks"]'],
        ['/migration/reports?plan=plan-1', '[data-testid="report-viewer"]'],
        ['/migration/accept?plan=plan-1', '[data-testid="item-copy"][data-done="true"]'],
      ]) {
        await zh.goto(new URL(path!, console_.origin).href);
        await zh.waitForSelector(ready!);
        expect(await zh.getAttribute('html', 'lang')).toBe('zh-CN');
        expect(untranslated(await visibleText(zh)), path).toEqual([]);
      }
      expect(await zh.locator('[data-nav="/migration/accept"]').innerText()).toBe('验收');
      await shot(zh, 'wizard-11-acceptance-zh');
    } finally {
      await zh.close();
    }
  }, 60_000);

  it('refuses the stage API without the console’s session, and a workspace outside the plan’s folder (real parleyctl console)', async () => {
    const run = new URL('/api/migration/plans/plan-1/runs', console_.origin);
    const body = JSON.stringify({ stage: 'diagnose', workspace: join(root, 'plan-1', 'ws-diagnose-9') });
    const anonymous = await fetch(run, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(anonymous.status).toBe(401);
    const launch = await fetch(console_.launchUrl, { redirect: 'manual' });
    const cookie = launch.headers.get('set-cookie')!.split(';')[0]!;
    const headers = { 'content-type': 'application/json', cookie };
    for (const workspace of [
      join(tmp!, 'elsewhere'),
      join(root, 'plan-1', '..', 'ws'),
      '/tmp/ws-outside',
      join(root, 'plan-1', 'reports'),
    ]) {
      const r = await fetch(run, { method: 'POST', headers, body: JSON.stringify({ stage: 'diagnose', workspace }) });
      expect(r.status, workspace).toBe(403);
      expect(((await r.json()) as { code: string }).code).toBe('path_not_allowed');
    }
    const probe = await fetch(new URL('/api/migration/plans/plan-1/db-info', console_.origin), {
      method: 'POST',
      headers,
      body: JSON.stringify({ dir: '/etc' }),
    });
    expect(probe.status).toBe(403);
    // and the same request inside the plan's folder runs
    const ok = await fetch(run, { method: 'POST', headers, body });
    expect(ok.status).toBe(200);
  }, 30_000);
});
