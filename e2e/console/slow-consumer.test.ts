import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectSlowClient, type SlowClient } from '../../apps/server/test/slow-client.ts';
import { launchChromium, openConsole, screenshot, TestConsole, TestNode, until } from './harness.ts';

/** `gateway.max_outbound_bytes` of the node: a client that does not read is closed past this. */
const BOUND = 8 * 1024 * 1024;
/** Payload of each message to the slow client, bytes (about 340 KiB on its wire once encrypted). */
const PAYLOAD = 256 * 1024;

describe('a slow consumer raises gateway pressure, seen on Overview, Pressure and Alerts', () => {
  let node: TestNode;
  let c: TestConsole;
  let browser: Browser;
  let page: Page;
  let slow: SlowClient | undefined;
  const payload = Buffer.alloc(PAYLOAD, 0x61).toString('base64');

  const post = async (path: string, body: unknown) => {
    const r = await fetch(node.api + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return (await r.json()) as { reason?: number; status?: number };
  };
  /** One message from a backend to the slow client, over the HTTP API. */
  const send = async () =>
    expect((await post('/message/send', { from_uid: 'backend', channel_id: 'slow', channel_type: 1, payload })).reason).toBe(1);
  /** The node's gateway/outbound depth in a sample taken after now (the collector samples every 500 ms). */
  const depth = async () => {
    await new Promise((r) => setTimeout(r, 600));
    const s = (await (await fetch(`${node.api}/top/v1/snapshot?window=2s&view=runtime`)).json()) as {
      pressure: { top: { component: string; pool: string; depth: number }[] };
    };
    return s.pressure.top.find((i) => i.component === 'gateway' && i.pool === 'outbound')!.depth;
  };

  beforeAll(async () => {
    node = await new TestNode({ id: 1, name: 'gw-node', env: { PARLEY_GATEWAY_MAX_OUTBOUND_BYTES: String(BOUND) } }).start();
    await post('/user/token', { uid: 'slow', token: 'tok-slow', device_flag: 1 });
    c = await new TestConsole([node.api]).start();
    browser = await launchChromium();
    page = await openConsole(browser, c);
  }, 60_000);
  afterAll(async () => {
    slow?.close();
    await browser?.close();
    await c?.stop();
    await node?.dispose();
  });

  it('a client that stops reading, with messages still sent to it, shows as degraded gateway pressure', async () => {
    await page.locator('[data-testid="verdict-hero"][data-level="ok"]').waitFor({ timeout: 20_000 });
    slow = await connectSlowClient(node.tcp, 'slow', 'tok-slow');
    slow.stopReading();
    // The kernel's socket buffers fill first (a few MiB on loopback), then the node's own outbound buffer.
    let d = 0;
    for (let batch = 0; batch < 40 && d === 0; batch++) {
      for (let i = 0; i < 4; i++) await send();
      d = await depth();
    }
    expect(d).toBeGreaterThan(0);
    // Then to about 86% of the bound, a few messages at a time, measuring as it goes: degraded, not closed.
    const perMessage = PAYLOAD * 1.4;
    while (d < 0.8 * BOUND) {
      const n = Math.max(1, Math.floor((0.86 * BOUND - d) / perMessage));
      for (let i = 0; i < n; i++) await send();
      d = await depth();
    }
    expect(d).toBeLessThan(0.95 * BOUND);

    const hot = page.locator('[data-testid="hot-pressure"] [data-hot-item="gateway/outbound"]');
    await until('gateway/outbound is degraded on the overview', async () =>
      (await hot.getAttribute('data-level')) === 'degraded' ? true : undefined,
    );
    expect(['degraded', 'critical']).toContain(await page.getAttribute('[data-testid="verdict-hero"]', 'data-level'));
    expect(await page.locator('[data-testid="verdict-reasons"]').innerText()).toContain('gw-node: gateway/outbound pressure');
    expect(await page.locator('[data-testid="active-alerts"] [data-alert="pressure_high"]').count()).toBeGreaterThan(0);
    await screenshot(page, 'overview-slow-consumer');

    await page.click('[data-nav="/pressure"]');
    const row = page.locator('[data-testid="pressure-table"] [data-pressure-row="gateway/outbound"]');
    await until('gateway/outbound is degraded on the pressure page', async () =>
      (await row.getAttribute('data-level')) === 'degraded' ? true : undefined,
    );
    // Depth is drawn against capacity: the bar is past the 0.8 mark and reads "6.7 MiB / 8 MiB".
    const bar = row.locator('[role="meter"]').first();
    expect(Number(await bar.getAttribute('aria-valuenow'))).toBeGreaterThanOrEqual(0.8);
    expect(await bar.getAttribute('data-band')).toBe('degraded');
    expect(await row.innerText()).toMatch(/\d MiB \/ 8 MiB/);
    expect(await page.getAttribute('[data-testid="component-scores"] [data-component="gateway"]', 'data-band')).toBe('degraded');
    await screenshot(page, 'pressure-slow-consumer');
  }, 90_000);

  it('recovers when the slow client goes away, keeping the alert as resolved', async () => {
    slow!.close();
    slow = undefined;
    await page.click('[data-nav="/alerts"]');
    const row = page.locator('[data-testid="alert-table"] [data-alert-row="pressure_high"]', { hasText: 'gateway/outbound pressure' });
    await row.first().waitFor({ timeout: 15_000 });
    await page
      .locator('[data-testid="alert-table"] [data-alert-row="pressure_high"][data-active="false"]', {
        hasText: 'gateway/outbound pressure',
      })
      .waitFor({ timeout: 20_000 });
    await page.click('[data-nav="/overview"]');
    await page.locator('[data-testid="verdict-hero"][data-level="ok"]').waitFor({ timeout: 20_000 });
  }, 60_000);
});
