import process from 'node:process';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebSocket } from 'ws';
import {
  CONSOLE_DIST,
  createHostHandlers,
  NodeRegistry,
  normaliseNodeUrl,
  StageRunner,
  startConsoleServer,
  type NodeEntry,
  type ToolCommand,
} from '@parley/console/host';
import { versionInfo } from '@parley/shared/version';

export interface ConsoleOptions {
  node: string[];
  listen: string;
  open: boolean;
  /** The migration root (workspaces, archives, reports, checklists); the page cannot change it then. */
  migrationRoot?: string;
}

/**
 * This very tool, for the wizard's stages and probes: the same Node, the same
 * flags (a run on the sources stays on the sources) and the same
 * `bin/parleyctl.js`, so the console never runs another build of the tool.
 */
function selfCommand(): ToolCommand {
  const bin = fileURLToPath(new URL('../bin/parleyctl.js', import.meta.url));
  return { command: process.execPath, args: [...process.execArgv, bin] };
}

function log(line: Record<string, unknown>): void {
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), ...line })}\n`);
}

/** `host:port` or `[v6]:port`, loopback only: the console has no TLS and trusts its one token. */
export function parseListen(raw: string): { host: string; port: number } | { error: string } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(raw.trim());
  if (!m) return { error: `--listen ${raw}: expected host:port, for example 127.0.0.1:5301` };
  const host = m[1] ?? m[2]!;
  const port = Number(m[3]);
  if (port > 65535) return { error: `--listen ${raw}: port out of range` };
  const loopback = host === 'localhost' || host === '::1' || (isIP(host) === 4 && host.startsWith('127.'));
  if (!loopback) return { error: `--listen ${raw}: the console listens on loopback only (127.0.0.0/8, ::1 or localhost)` };
  return { host: host === 'localhost' ? '127.0.0.1' : host, port };
}

/**
 * Opens the launch URL in the default browser without putting the token in
 * a process list: the opener gets a private file that redirects to it.
 */
function openBrowser(url: string): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'parley-console-'));
  const file = join(dir, 'open.html');
  writeFileSync(
    file,
    `<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=${url}"><title>Parley console</title>`,
    { mode: 0o600 },
  );
  const [cmd, args] =
    process.platform === 'darwin'
      ? ['open', [file]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '', file]]
        : ['xdg-open', [file]];
  const child = spawn(cmd, args, { detached: true, stdio: 'ignore' });
  child.on('error', () => log({ level: 'warn', msg: 'could not open a browser; open the URL printed on stdout' }));
  child.unref();
  return () => rmSync(dir, { recursive: true, force: true });
}

/**
 * `parleyctl console`: serves the built console on loopback, proxies the
 * configured nodes' ops routes, prints `{"event":"console","url":…}` on
 * stdout and runs until SIGINT or SIGTERM. Exit 2 on bad options.
 */
export async function runConsole(o: ConsoleOptions): Promise<number> {
  const listen = parseListen(o.listen);
  if ('error' in listen) {
    process.stderr.write(`parleyctl console: ${listen.error}\n`);
    return 2;
  }
  const entries: NodeEntry[] = [];
  for (const raw of o.node) {
    const n = normaliseNodeUrl(raw);
    if ('error' in n) {
      // Credentials in a refused URL are not echoed.
      process.stderr.write(`parleyctl console: --node ${raw.replace(/\/\/[^/@]*@/, '//…@')}: ${n.error}\n`);
      return 2;
    }
    if (!entries.some((e) => e.id === n.id)) entries.push({ id: n.id, url: n.url });
  }
  if (!existsSync(join(CONSOLE_DIST, 'index.html'))) {
    process.stderr.write(`parleyctl console: the console is not built (${CONSOLE_DIST}); run: npm run build -w apps/console\n`);
    return 1;
  }
  if (o.migrationRoot !== undefined && !isAbsolute(o.migrationRoot)) {
    process.stderr.write(`parleyctl console: --migration-root ${o.migrationRoot}: give an absolute path\n`);
    return 2;
  }
  const tool = selfCommand();
  const runner = new StageRunner(tool);
  let handlers;
  try {
    handlers = createHostHandlers({
      registry: new NodeRegistry(entries),
      fetch: (url, init) => fetch(url, init),
      platform: 'web',
      version: versionInfo().version,
      migration: {
        tool,
        runner,
        socket: (url) => new WebSocket(url, { handshakeTimeout: 5_000 }),
        ...(o.migrationRoot !== undefined ? { root: resolve(o.migrationRoot) } : {}),
      },
    });
  } catch (err) {
    process.stderr.write(`parleyctl console: --migration-root ${o.migrationRoot}: ${(err as Error).message}\n`);
    return 2;
  }
  let server;
  try {
    server = await startConsoleServer({ host: listen.host, port: listen.port, staticDir: CONSOLE_DIST, handlers, log });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    process.stderr.write(
      `parleyctl console: cannot listen on ${o.listen}: ${code === 'EADDRINUSE' ? 'the port is in use' : (err as Error).message}\n`,
    );
    return 1;
  }
  // Stop handlers first: whoever reads the launch line may signal at once.
  const stopped = new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  process.stdout.write(`${JSON.stringify({ event: 'console', url: server.launchUrl })}\n`);
  log({ level: 'info', msg: 'console listening', origin: server.origin, nodes: entries.map((e) => e.url) });
  const cleanup = o.open ? openBrowser(server.launchUrl) : () => {};
  await stopped;
  cleanup();
  // A stage still running is interrupted as Ctrl-C would; its workspace stays for its own rerun rules.
  await runner.stopAll();
  await server.close();
  log({ level: 'info', msg: 'console stopped' });
  return 0;
}
