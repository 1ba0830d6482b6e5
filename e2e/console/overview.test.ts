import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, openConsole, screenshot, TestConsole, TestNode, until } from './harness.ts';
import { Load } from './load.ts';

/** The console's default refresh interval, ms (the test keeps it). */
const REFRESH_MS = 2000;

/** A node-table cell's number ("1,234.5/s" → 1234.5), or undefined for "–". */
async function cell(page: Page, nodeId: string, col: string): Promise<number | undefined> {
  const text = await page.locator(`[data-node-row="${nodeId}"] [data-col="${col}"]`).innerText();
  const n = Number.parseFloat(text.replace(/[^\d.]/g, ''));
  return Number.isFinite(n) ? n : undefined;
}

describe('overview against two real nodes under load', () => {
  let a: TestNode;
  let b: TestNode;
  let c: TestConsole;
  let browser: Browser;
  let page: Page;
  const loads: Load[] = [];
  let idA = '';
  let idB = '';

  beforeAll(async () => {
    [a, b] = await Promise.all([new TestNode({ id: 1, name: 'node-a' }).start(), new TestNode({ id: 2, name: 'node-b' }).start()]);
    idA = `127-0-0-1-${a.port}`;
    idB = `127-0-0-1-${b.port}`;
    c = await new TestConsole([a.api, b.api]).start();
    browser = await launchChromium();
    page = await openConsole(browser, c);
  }, 60_000);
  afterAll(async () => {
    await Promise.all(loads.map((l) => l.stop()));
    await browser?.close();
    await c?.stop();
    await a?.dispose();
    await b?.dispose();
  });

  it('logs in with the token, which leaves the address bar and is not readable by the page', async () => {
    expect(page.url()).toBe(`${c.origin}/overview`);
    expect(await page.evaluate(() => document.cookie)).toBe('');
    const cookies = await page.context().cookies();
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
  });

  it('shows both nodes ready, and rates that move while messages flow', async () => {
    await page.locator('[data-testid="ready-count"]', { hasText: '2/2' }).waitFor({ timeout: 20_000 });
    await page.locator(`[data-node-row="${idA}"][data-reach="ready"]`).waitFor();
    await page.locator(`[data-node-row="${idB}"][data-reach="ready"]`).waitFor();
    expect(await page.getAttribute('[data-testid="verdict-hero"]', 'data-level')).toBe('ok');
    expect(await cell(page, idA, 'send')).toBe(0);

    loads.push(await Load.start(a, 'ov-a', { senders: 2, inflight: 1, ratePerSec: 20, maxMs: 60_000 }));
    loads.push(await Load.start(b, 'ov-b', { senders: 2, inflight: 1, ratePerSec: 20, maxMs: 60_000 }));
    const first = await until('both nodes show sends', async () => {
      const [sa, sb] = [await cell(page, idA, 'send'), await cell(page, idB, 'send')];
      return sa! > 5 && sb! > 5 ? { sa: sa!, sb: sb! } : undefined;
    });
    expect(await cell(page, idA, 'ack')).toBeGreaterThan(0);
    expect(await cell(page, idA, 'conn')).toBe(4);

    // More traffic on node-a: its rate climbs on the page, node-b's stays where it was.
    loads.push(await Load.start(a, 'ov-a2', { senders: 4, inflight: 1, ratePerSec: 100, maxMs: 60_000 }));
    const raised = await until('node-a rate rises', async () => {
      const sa = await cell(page, idA, 'send');
      return sa! > first.sa + 40 ? sa : undefined;
    });
    expect(raised).toBeGreaterThan(first.sa);
    expect(await cell(page, idB, 'send')).toBeLessThan(raised! / 2);
    // The trend chart's legend carries the same live figure per node.
    const legend = page.locator('[data-testid="chart-send"] [data-legend="node-a"] [data-legend-value]');
    await until('send chart has node-a points', async () =>
      (Number.parseFloat((await legend.innerText()).replace(/[^\d.]/g, '')) || 0) > 40 ? true : undefined,
    );
    await until('the send chart has history', async () =>
      Number(await page.getAttribute('[data-testid="chart-send"]', 'data-points')) >= 3 ? true : undefined,
    );
    await screenshot(page, 'overview');
  }, 60_000);

  it('shows a killed node unreachable within two refresh intervals, its last data marked stale, and ready again after a restart', async () => {
    const row = page.locator(`[data-node-row="${idB}"]`);
    expect(await row.locator('[data-col="rss"]').innerText()).toMatch(/ MiB$/);
    const killedAt = Date.now();
    await b.kill();
    await page.locator(`[data-node-row="${idB}"][data-reach="unreachable"]`).waitFor({ timeout: 2 * REFRESH_MS });
    const shownAfter = Date.now() - killedAt;
    expect(shownAfter).toBeLessThanOrEqual(2 * REFRESH_MS);
    // Its last data stays on screen, greyed and aged; the node is not counted ready.
    expect(await row.getAttribute('data-stale')).toBe('true');
    expect(await row.locator('[data-stale]').innerText()).toMatch(/^stale · \d+ s old$/);
    // The last snapshot's figures stay (a refresh may have landed between a read before the kill
    // and the kill itself, so they are compared across refreshes made while it is down).
    const rssStale = await row.locator('[data-col="rss"]').innerText();
    expect(rssStale).toMatch(/ MiB$/);
    expect(await page.locator('[data-testid="ready-count"]').innerText()).toBe('1/2');
    const line = await page.locator('[data-testid="unreachable-line"]').innerText();
    expect(line).toContain('node-b');
    expect(line).toMatch(/last data \d+ s old/);
    expect(await page.getAttribute(`[data-node-dot="${idB}"]`, 'data-reach')).toBe('unreachable');
    expect(await page.locator('[data-testid="nodes-down"]').innerText()).toMatch(/^1 unreachable$/i);
    expect(await page.locator('[data-testid="verdict-summary"]').innerText()).toContain('from 1 of 2 nodes');
    await screenshot(page, 'overview-node-down');
    await page.waitForTimeout(REFRESH_MS + 500);
    expect(await row.getAttribute('data-reach')).toBe('unreachable');
    expect(await row.locator('[data-col="rss"]').innerText()).toBe(rssStale);

    await b.start();
    await page.locator(`[data-node-row="${idB}"][data-reach="ready"]`).waitFor({ timeout: 20_000 });
    await page.locator('[data-testid="ready-count"]', { hasText: '2/2' }).waitFor();
    // Ready from /readyz at once; its snapshot is current again once its collector has warmed up.
    await page.locator(`[data-node-row="${idB}"][data-reach="ready"][data-stale="false"]`).waitFor({ timeout: 20_000 });
    expect(await page.locator('[data-testid="unreachable-line"]').count()).toBe(0);
    expect(await page.locator('[data-testid="nodes-down"]').count()).toBe(0);
  }, 60_000);
});
