import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { Page } from 'playwright-core';
import { fixturesPresent, V2_FIXTURES_DIR } from '../../test-support/fixtures.ts';
import { SOURCE_NODE_ARGS } from '../../test-support/source-node.ts';
import { screenshot, SCREENSHOT_DIR, until } from './harness.ts';

/** A temp folder (real path) with copies of the named v2 fixtures' data dirs at `<tmp>/v2-<name>`; undefined without fixtures. */
export function copyFixtures(...names: string[]): string | undefined {
  if (!fixturesPresent(V2_FIXTURES_DIR)) return undefined;
  const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'parley-wizard-e2e-')));
  for (const n of names) cpSync(join(V2_FIXTURES_DIR, n, 'datadir'), join(tmp, `v2-${n}`), { recursive: true });
  return tmp;
}

/** `parley version --output json` of this checkout: what an operator reads off the target servers. */
export function serverCommit(): string {
  const r = spawnSync(
    process.execPath,
    [...SOURCE_NODE_ARGS, join(import.meta.dirname, '..', '..', 'apps', 'server', 'bin', 'parley.js'), 'version', '--output', 'json'],
    {
      encoding: 'utf8',
    },
  );
  return (JSON.parse(r.stdout) as { commit: string }).commit;
}

/** A screenshot of the whole page from its top (the shell's header and navigation are fixed). */
export async function shot(page: Page, name: string): Promise<void> {
  await page.evaluate(() => window.scrollTo(0, 0));
  await screenshot(page, name);
}

/** What the window shows now (a dialog over the page, say), transitions finished. */
export async function shotWindow(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), animations: 'disabled' });
}

/** Steps the page through one wizard step by its link in the list of steps. */
export async function gotoStep(page: Page, step: string): Promise<void> {
  await page.click(`[data-step-link="${step}"]`);
  await page.waitForSelector(`[data-page="migration"][data-step="${step}"]`);
}

/**
 * Runs a stage from its step as an operator does (Run, then wait for the
 * outcome), takes a screenshot and returns the outcome (`succeeded`,
 * `blocked`, `failed`, `cancelled`).
 */
export async function runStage(page: Page, stage: string, name: string): Promise<string> {
  await gotoStep(page, stage);
  await page.click('[data-testid="run-stage"]');
  const outcome = page.locator('[data-testid="outcome"]');
  const result = await until(
    `${stage} finished`,
    async () => ((await outcome.count()) > 0 ? ((await outcome.getAttribute('data-outcome')) ?? undefined) : undefined),
    60_000,
  );
  // the report viewer follows the run
  if (result !== 'cancelled') await page.waitForSelector(`[data-testid="report-${stage}"]`);
  await shot(page, name);
  return result;
}

/** Fills the plan form for a one-node plan of `source` into `target`, and saves it. */
export async function fillAndSavePlan(page: Page, p: { source: string; target: string; cluster: string }): Promise<string> {
  await gotoStep(page, 'plan');
  await page.fill('[data-pointer="/sources/0/node_id"]', '1');
  await page.fill('[data-pointer="/sources/0/data_dir"]', p.source);
  await page.fill('[data-pointer="/sources/0/shard_count"]', '8');
  await page.fill('[data-pointer="/target/cluster_id"]', p.cluster);
  await page.fill('[data-pointer="/target/nodes/0/node_id"]', '7');
  await page.fill('[data-pointer="/target/nodes/0/addr"]', '127.0.0.1:11110');
  await page.fill('[data-pointer="/target/nodes/0/data_dir"]', p.target);
  await expect.poll(() => page.getAttribute('[data-testid="plan-validity"]', 'data-valid')).toBe('true');
  await page.click('[data-testid="save-plan"]');
  await page.waitForSelector('[data-testid="plan-saved"]');
  // the header's plan list follows once the host's state is read again
  return until('the saved plan selected', async () => (await page.inputValue('[data-testid="plan-select"]')) || undefined);
}

/** Ticks a checklist item as the operator (the operator's name must be entered). */
export async function tick(page: Page, item: string, note?: string): Promise<void> {
  const row = page.locator(`[data-testid="item-${item}"]`);
  if (note) await row.locator('input[placeholder]').first().fill(note);
  // The box is the host's state: it turns on once the host has recorded the tick, not at the click.
  await row.locator(`[data-testid="tick-${item}"]`).click();
  await until(`${item} ticked`, async () => ((await row.getAttribute('data-done')) === 'true' ? true : undefined)).catch(async (err) => {
    throw new Error(`${(err as Error).message}: ${await row.innerText()}`);
  });
}

/** Runs an item's live check and waits until the item is proven. */
export async function checkItem(page: Page, item: string): Promise<void> {
  const row = page.locator(`[data-testid="item-${item}"]`);
  await row.locator(`[data-testid="check-${item}"]`).click();
  await until(`${item} proven`, async () => ((await row.getAttribute('data-done')) === 'true' ? true : undefined), 20_000).catch(
    async (err) => {
      throw new Error(`${(err as Error).message}: ${await row.innerText()}`);
    },
  );
}

/** Latin words a Chinese wizard page may show: units, names (products, systems, standards) and literal values. */
const ZH_ALLOWED =
  /^(ms|KiB|MiB|GiB|JSON|Parley|WuKongIM|Linux|macOS|Pebble|WebSocket|Markdown|Schema|SHA|ISO|Base|POST|LOCK|COMPLETE|true|false|parleyctl)$/;

/**
 * Words of a page's visible text (identifiers marked `data-raw` excluded)
 * that are English: after dropping `code` spans, paths, dotted or
 * underscored keys, addresses, numbered ids (`plan-1`) and `--flags`, which stay as they are.
 */
export function untranslated(texts: readonly string[]): string[] {
  return texts.flatMap((t) => {
    const rest = t
      .replace(/`[^`]*`/g, '')
      .replace(/--[a-z-]+/g, '')
      .replace(/[\w/-]*[._/:][\w./:-]*/g, '')
      .replace(/\b\w+-\d+\b/g, '');
    return (rest.match(/[A-Za-z]{2,}/g) ?? []).filter((w) => !ZH_ALLOWED.test(w)).map((w) => `${w} (in "${t}")`);
  });
}
