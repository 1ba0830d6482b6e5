/**
 * The overview of a three-node cluster (real processes on PostgreSQL and
 * NATS) with only two of its nodes added to the console: the cluster card
 * lists all three from the slot map, marks which ones the console polls, and
 * shows a killed node as gone.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresReachable } from '@parley/store/testing';
import { startCluster, type TestCluster } from '../../test-support/cluster.ts';
import { launchChromium, openConsole, screenshot, TestConsole, until } from './harness.ts';

const pgUp = await postgresReachable();

describe.skipIf(!pgUp)('overview of a cluster', () => {
  let cluster: TestCluster;
  let c: TestConsole;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    cluster = await startCluster({ nodes: 3, env: { PARLEY_TOP_COLLECT_INTERVAL: '500ms', PARLEY_LOG_LEVEL: 'warn' } });
    await cluster.balanced(1);
    c = await new TestConsole([cluster.nodes.get(1)!.server.api, cluster.nodes.get(2)!.server.api]).start();
    browser = await launchChromium();
    page = await openConsole(browser, c);
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await c?.stop();
    await cluster?.stop();
  }, 30_000);

  it('lists every node of the cluster with its slots, including one the console does not poll', async () => {
    await page.locator('[data-testid="ready-count"]', { hasText: '2/2' }).waitFor({ timeout: 20_000 });
    const card = page.locator('[data-testid="cluster-card"]');
    await card.waitFor({ timeout: 20_000 });
    await until('three members', async () => ((await card.locator('[data-cluster-member]').count()) === 3 ? true : undefined));
    for (const id of [1, 2, 3]) {
      const row = card.locator(`[data-cluster-member="${id}"]`);
      expect(await row.getAttribute('data-live')).toBe('true');
      expect(await row.locator('[data-col="slots"]').innerText()).toBe('4');
    }
    expect(await card.locator('[data-cluster-member="3"]').innerText()).toContain('not added');
    expect(await card.locator('[data-cluster-member="1"]').innerText()).toContain('polled');
    const summary = await page.locator('[data-testid="cluster-summary"]').innerText();
    expect(summary).toContain(`cluster ${cluster.clusterId}`);
    expect(summary).toContain('leader 1');
    expect(summary).toContain('12 slots / 256 hash slots');
    expect(await page.locator('[data-testid="cluster-nodes-gone"]').count()).toBe(0);
    await screenshot(page, 'overview-cluster');
  });

  it('shows a killed node as gone, and its slots taken over by the others', async () => {
    cluster.nodes.get(3)!.server.proc.kill('SIGKILL');
    const card = page.locator('[data-testid="cluster-card"]');
    await until(
      'node 3 gone',
      async () => ((await card.locator('[data-cluster-member="3"]').getAttribute('data-live')) === 'false' ? true : undefined),
      30_000,
    );
    await until(
      'slots taken over',
      async () => {
        const counts = await Promise.all([1, 2].map((id) => card.locator(`[data-cluster-member="${id}"] [data-col="slots"]`).innerText()));
        return counts.every((n) => n === '6') ? true : undefined;
      },
      30_000,
    );
    // the verdict hero says so at a glance, though the console does not poll node 3
    expect((await page.locator('[data-testid="cluster-nodes-gone"]').innerText()).toLowerCase()).toBe('1 cluster node(s) gone');
    expect(await page.locator('[data-testid="cluster-gone-line"]').innerText()).toContain('node-3');
    await screenshot(page, 'overview-cluster-node-gone');
  }, 60_000);
});
