import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { app, BrowserWindow, ipcMain, net, protocol, safeStorage } from 'electron';
import { createHostHandlers } from '../host/handlers.ts';
import { NodeRegistry } from '../host/node-registry.ts';
import { StageRunner } from '../host/migration/runner.ts';
import type { ToolCommand } from '../host/migration/tool.ts';
import { staticFile } from '../host/static-files.ts';
import { APP_ORIGIN, isConsoleFrame, registerIpc } from './ipc.ts';
import { NodeStore, type Secrets } from './node-store.ts';

// Thin wiring only: every decision lives in host/ and electron/ modules that Vitest runs without Electron.

const here = fileURLToPath(new URL(/* @vite-ignore */ '.', import.meta.url));
const WEB_DIST = join(here, '..', 'dist');
const PRELOAD = join(here, 'preload.cjs');
const VERSION = (JSON.parse(readFileSync(join(here, '..', 'package.json'), 'utf8')) as { version: string }).version;
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; font-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

/**
 * The `parleyctl` the wizard runs, as a separate Node process (never inside Electron's Node, so the tool keeps
 * its own native modules): PARLEY_PARLEYCTL names its bin/parleyctl.js, else the one beside this app in a
 * checkout; `node` from PATH (or PARLEY_NODE) runs it. Absent: the wizard says it cannot run stages.
 */
function migratorTool(): ToolCommand | undefined {
  const bin = process.env.PARLEY_PARLEYCTL ?? join(here, '..', '..', 'migrator', 'bin', 'parleyctl.js');
  return existsSync(bin) ? { command: process.env.PARLEY_NODE ?? 'node', args: [bin] } : undefined;
}

protocol.registerSchemesAsPrivileged([{ scheme: 'app', privileges: { standard: true, secure: true, supportFetchAPI: true } }]);

if (!app.requestSingleInstanceLock()) app.quit();

/** safeStorage, unless it would fall back to plain text (Linux without a keyring): then tokens stay in memory. */
function secrets(): Secrets {
  const plain = process.platform === 'linux' && safeStorage.getSelectedStorageBackend() === 'basic_text';
  return {
    available: safeStorage.isEncryptionAvailable() && !plain,
    encrypt: (s) => safeStorage.encryptString(s),
    decrypt: (b) => safeStorage.decryptString(b),
  };
}

function createWindow(): BrowserWindow {
  const win = new BrowserWindow({
    width: 1440,
    height: 900,
    title: 'Parley console',
    webPreferences: { preload: PRELOAD, contextIsolation: true, sandbox: true, nodeIntegration: false, webSecurity: true },
  });
  win.webContents.setWindowOpenHandler(() => ({ action: 'deny' }));
  win.webContents.on('will-navigate', (event, url) => {
    if (!isConsoleFrame(url)) event.preventDefault();
  });
  void win.loadURL(`${APP_ORIGIN}/overview`);
  return win;
}

void app.whenReady().then(async () => {
  protocol.handle('app', async (request) => {
    const file = await staticFile(WEB_DIST, new URL(request.url).pathname);
    if (!file) return new Response('not found', { status: 404 });
    return new Response(new Uint8Array(file.body), { headers: { 'content-type': file.type, 'content-security-policy': CSP } });
  });
  const store = new NodeStore(join(app.getPath('userData'), 'nodes.json'), secrets());
  const registry = new NodeRegistry(await store.load(), (entries) => {
    store.save(entries).catch((err: Error) => console.error(`parley console: could not save the node list: ${err.message}`));
  });
  const tool = migratorTool();
  const runner = tool && new StageRunner(tool);
  // Quitting interrupts a running stage as Ctrl-C would (SIGINT now); its workspace stays for its rerun rules.
  app.on('will-quit', () => void runner?.stopAll());
  registerIpc(
    ipcMain,
    createHostHandlers({
      registry,
      fetch: (url, init) => net.fetch(url, init),
      platform: 'desktop',
      version: VERSION,
      ...(tool && runner ? { migration: { tool, runner, socket: (url: string) => new WebSocket(url) } } : {}),
    }),
  );
  createWindow();
  app.on('activate', () => {
    if (BrowserWindow.getAllWindows().length === 0) createWindow();
  });
});

app.on('second-instance', () => BrowserWindow.getAllWindows()[0]?.focus());
app.on('window-all-closed', () => {
  if (process.platform !== 'darwin') app.quit();
});
