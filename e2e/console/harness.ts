import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { SOURCE_NODE_ARGS } from '../../test-support/source-node.ts';

const here = dirname(fileURLToPath(import.meta.url));
const ROOT = join(here, '..', '..');
const PARLEY_BIN = join(ROOT, 'apps', 'server', 'bin', 'parley.js');
const PARLEYCTL_BIN = join(ROOT, 'apps', 'migrator', 'bin', 'parleyctl.js');
/** Screenshots of every page, for a person to look at (git-ignored). */
export const SCREENSHOT_DIR = join(ROOT, 'e2e', 'screenshots');

/** Resolves with the first stdout line matching `match` (parsed), or rejects when the process exits or `ms` pass. */
function firstLine<T>(proc: ChildProcess, match: string, stderr: () => string, ms = 30_000): Promise<T> {
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`no ${match} line in ${ms} ms:\n${stderr()}`));
    }, ms);
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.includes(match));
      if (!line) return;
      clearTimeout(timer);
      resolve(JSON.parse(line) as T);
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited (${code}) before ${match}:\n${stderr()}`));
    });
  });
}

function exitOf(proc: ChildProcess): Promise<number | null> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve(proc.exitCode);
  return new Promise((resolve) => proc.once('exit', (code) => resolve(code)));
}

export interface NodeOptions {
  id: number;
  name: string;
  /** Extra PARLEY_* settings. */
  env?: Record<string, string>;
  debug?: boolean;
  /** bench.api_token: guards /debug/* when set. */
  token?: string;
  /** A data dir to start on (an imported target); a new temp dir when absent. */
  dataDir?: string;
}

/** A real Parley node (`parley start`, on the TypeScript sources) as a child process on ephemeral loopback ports. */
export class TestNode {
  proc!: ChildProcess;
  api = '';
  ws = '';
  /** `tcp://127.0.0.1:port` of the WKProto TCP gateway. */
  tcp = '';
  port = 0;
  private err = '';
  readonly dataDir: string;

  constructor(readonly opts: NodeOptions) {
    this.dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'parley-console-e2e-'));
  }

  /** Starts the node: on a free port the first time, on the same port (and data) after a stop. */
  async start(): Promise<this> {
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      PARLEY_NODE_ID: String(this.opts.id),
      PARLEY_NODE_NAME: this.opts.name,
      PARLEY_NODE_DATA_DIR: this.dataDir,
      PARLEY_API_LISTEN_ADDR: `127.0.0.1:${this.port}`,
      PARLEY_GATEWAY_WS_ADDR: '127.0.0.1:0',
      PARLEY_GATEWAY_TCP_ADDR: '127.0.0.1:0',
      PARLEY_LOG_LEVEL: 'warn',
      PARLEY_STORE_SYNC: 'normal',
      PARLEY_TOP_COLLECT_INTERVAL: '500ms',
      PARLEY_OBSERVABILITY_DEBUG_API_ENABLE: this.opts.debug ? 'true' : 'false',
    };
    if (this.opts.token) env.PARLEY_BENCH_API_TOKEN = this.opts.token;
    Object.assign(env, this.opts.env);
    this.err = '';
    this.proc = spawn(process.execPath, [...SOURCE_NODE_ARGS, PARLEY_BIN, 'start'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.proc.stderr!.on('data', (d: Buffer) => (this.err += d.toString()));
    const ev = await firstLine<{ api: string; ws: string; tcp: string }>(this.proc, '"event":"listening"', () => this.err);
    this.api = `http://${ev.api}`;
    this.ws = `ws://${ev.ws}`;
    this.tcp = `tcp://${ev.tcp}`;
    this.port = Number(ev.api.split(':').pop());
    return this;
  }

  /** SIGKILL: the node disappears the way a crashed process does. */
  async kill(): Promise<void> {
    this.proc.kill('SIGKILL');
    await exitOf(this.proc);
  }

  async stop(): Promise<void> {
    if (this.proc.exitCode === null && this.proc.signalCode === null) {
      this.proc.kill('SIGTERM');
      await exitOf(this.proc);
    }
  }

  async dispose(): Promise<void> {
    await this.stop();
    if (!this.opts.dataDir) rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/** `parleyctl console` (on the TypeScript sources) as a child process, loopback, ephemeral port, no browser opened. */
export class TestConsole {
  proc!: ChildProcess;
  /** The launch URL printed on stdout (carries the token). */
  launchUrl = '';
  origin = '';
  token = '';
  private err = '';

  constructor(
    readonly nodes: string[],
    readonly extraArgs: string[] = [],
  ) {}

  async start(): Promise<this> {
    const args = [
      ...SOURCE_NODE_ARGS,
      PARLEYCTL_BIN,
      'console',
      '--no-open',
      '--listen',
      '127.0.0.1:0',
      ...this.nodes.flatMap((n) => ['--node', n]),
      ...this.extraArgs,
    ];
    this.proc = spawn(process.execPath, args, {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.proc.stderr!.on('data', (d: Buffer) => (this.err += d.toString()));
    const ev = await firstLine<{ event: string; url: string }>(this.proc, '"event":"console"', () => this.err);
    this.launchUrl = ev.url;
    const u = new URL(ev.url);
    this.token = u.searchParams.get('token') ?? '';
    this.origin = u.origin;
    return this;
  }

  /** Everything the console wrote to stderr (its log). */
  stderr(): string {
    return this.err;
  }

  async stop(): Promise<number | null> {
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill('SIGTERM');
    return exitOf(this.proc);
  }
}

/** Debian's Chromium, headless, as HELPERS.md prescribes. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

/** A page at 1440×900 in `locale`, logged in through the launch URL. */
export async function openConsole(browser: Browser, c: TestConsole, locale = 'en-US', path = '/overview'): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, locale, acceptDownloads: true });
  const page = await context.newPage();
  const launch = new URL(c.launchUrl);
  launch.pathname = path;
  await page.goto(launch.href);
  return page;
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  // Transitions (drawers, tooltips) are finished, not caught half way.
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true, animations: 'disabled' });
}

/** Polls `probe` every 100 ms until it returns a value, or fails after `ms`. */
export async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) throw new Error(`${what}: not met within ${ms} ms${last ? ` (${(last as Error).message})` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Every visible text of the page that is not an identifier (node names, URLs,
 * component paths are marked data-raw and stay as they are), plus the
 * options of its selects.
 */
export function visibleText(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const out: string[] = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement;
      const text = n.textContent?.trim();
      if (!el || !text || el.closest('[data-raw], script, style, option')) continue;
      const box = el.getBoundingClientRect();
      if (box.width === 0 || box.height === 0 || getComputedStyle(el).visibility === 'hidden') continue;
      out.push(text);
    }
    for (const o of document.querySelectorAll('option')) out.push(o.textContent ?? '');
    for (const e of document.querySelectorAll('[aria-label], [title], [placeholder]')) {
      for (const a of ['aria-label', 'title', 'placeholder']) {
        const v = e.getAttribute(a);
        if (v && !e.closest('[data-raw]')) out.push(v);
      }
    }
    return out;
  });
}
