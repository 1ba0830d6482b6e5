import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, openConsole, screenshot, TestConsole, TestNode, visibleText } from './harness.ts';
import { Load } from './load.ts';

/** Latin words a Chinese screen may show: units, percentiles, the product name. */
const ALLOWED = new Set(['ms', 'KiB', 'MiB', 'GiB', 'P50', 'P99', 'Parley']);

describe('the overview in Simplified Chinese', () => {
  let node: TestNode;
  let c: TestConsole;
  let browser: Browser;
  let page: Page;
  let load: Load;

  beforeAll(async () => {
    node = await new TestNode({ id: 1, name: 'zh-node' }).start();
    c = await new TestConsole([node.api]).start();
    load = await Load.start(node, 'zh', { senders: 1, inflight: 1, ratePerSec: 10, maxMs: 40_000 });
    browser = await launchChromium();
    page = await openConsole(browser, c, 'zh-CN');
  }, 60_000);
  afterAll(async () => {
    await load?.stop();
    await browser?.close();
    await c?.stop();
    await node?.dispose();
  });

  it('is picked from the browser language, and leaves no English string untranslated', async () => {
    await page.locator('[data-testid="ready-count"]', { hasText: '1/1' }).waitFor({ timeout: 20_000 });
    await page
      .locator('[data-testid="chart-send"][data-points="3"], [data-testid="chart-send"][data-points="4"]')
      .first()
      .waitFor({ timeout: 20_000 });
    expect(await page.getAttribute('html', 'lang')).toBe('zh-CN');
    expect(await page.locator('[data-testid="verdict-level"]').innerText()).toBe('正常');
    expect(await page.locator('[data-testid="verdict-summary"]').innerText()).toBe('运行正常');
    expect(await page.locator('[data-nav="/overview"]').innerText()).toBe('总览');

    const texts = await visibleText(page);
    expect(texts.length).toBeGreaterThan(40);
    const english = texts.flatMap((t) =>
      (t.match(/[A-Za-z][A-Za-z0-9]+/g) ?? []).filter((w) => !ALLOWED.has(w)).map((w) => `${w} (in "${t}")`),
    );
    expect(english).toEqual([]);
    // Numbers and times are formatted for the locale (24 h clock).
    expect(await page.locator('[data-testid="updated-ago"]').innerText()).toMatch(/^\d+ 秒前更新$|^暂无数据$/);
    await screenshot(page, 'overview-zh');
  }, 60_000);
});
