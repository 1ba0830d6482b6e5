import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, openConsole, screenshot, TestConsole, TestNode } from './harness.ts';

const TOKEN = 'diag-bench-token-51c2';

describe('diagnostics against a node with the debug API (and a token) and one without', () => {
  let guarded: TestNode;
  let plain: TestNode;
  let c: TestConsole;
  let browser: Browser;
  let page: Page;
  let guardedId = '';
  let plainId = '';

  beforeAll(async () => {
    [guarded, plain] = await Promise.all([
      new TestNode({ id: 1, name: 'diag-guarded', debug: true, token: TOKEN }).start(),
      new TestNode({ id: 2, name: 'diag-plain' }).start(),
    ]);
    guardedId = `127-0-0-1-${guarded.port}`;
    plainId = `127-0-0-1-${plain.port}`;
    c = await new TestConsole([guarded.api, plain.api]).start();
    browser = await launchChromium();
    page = await openConsole(browser, c, 'en-US', '/diagnostics');
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await c?.stop();
    await guarded?.dispose();
    await plain?.dispose();
  });

  it('says "debug disabled" on the node without the debug API', async () => {
    await page.selectOption('[data-testid="diag-node"] select, select[data-testid="diag-node"]', plainId);
    const notice = page.locator('[data-state="disabled"]');
    await notice.waitFor({ timeout: 15_000 });
    expect(await notice.innerText()).toContain('Debug API disabled on this node');
    expect(await notice.innerText()).toContain('observability.debug_api_enable');
    await screenshot(page, 'diagnostics-disabled');
  });

  it('asks for the token on the node that sets bench.api_token, then shows its config', async () => {
    await page.selectOption('select[data-testid="diag-node"]', guardedId);
    const prompt = page.locator('[data-testid="token-prompt"]');
    await prompt.waitFor({ timeout: 15_000 });
    expect(await prompt.innerText()).toContain('This node needs its token');
    await screenshot(page, 'diagnostics-token');

    await page.fill('[data-testid="token-input"] input, input[data-testid="token-input"]', TOKEN);
    await page.click('[data-testid="token-save"]');
    const config = page.locator('[data-testid="config-values"]');
    await config.waitFor({ timeout: 15_000 });
    expect(await config.locator('[data-config-key="node.name"] td').nth(1).innerText()).toBe('diag-guarded');
    expect(await config.locator('[data-config-key="observability.debug_api_enable"] td').nth(1).innerText()).toBe('true');
    // The node redacts its own secret; the console never had it in the page after the prompt.
    expect(await config.locator('[data-config-key="bench.api_token"] td').nth(1).innerText()).not.toContain(TOKEN);
    expect(await page.content()).not.toContain(TOKEN);
    expect(await page.evaluate(() => JSON.stringify(localStorage))).not.toContain(TOKEN);
    await screenshot(page, 'diagnostics-config');
  });

  it('shows the node’s recent events and looks a message up', async () => {
    await page.click('[role="tab"]:has-text("Events")');
    await page.locator('[data-testid="debug-events-panel"]').waitFor({ timeout: 15_000 });
    await screenshot(page, 'diagnostics-events');
    await page.click('[role="tab"]:has-text("Message lookup")');
    await page.fill('input >> nth=0', 'no-such-message');
    await page.click('button:has-text("Look up")');
    await page.locator('[data-testid="debug-events"]').waitFor({ timeout: 15_000 });
    expect(await page.getAttribute('[data-testid="lookup-status"]', 'data-status')).toBe('not_found');
    expect(await page.locator('[data-testid="lookup-status"]').textContent()).toBe('Not found');
  });
});
