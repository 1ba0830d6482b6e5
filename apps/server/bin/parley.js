#!/usr/bin/env node
// `parley` runs the compiled JavaScript in dist/ (`npm run build`; `npm ci` builds too). Started as
// `node --conditions=@parley/source --import tsx bin/parley.js` (`npm run dev`, the tests), the same
// import resolves to the TypeScript sources instead: see the exports of package.json.
import { existsSync, readdirSync } from 'node:fs';
import { setPriority } from 'node:os';

// V8's garbage-collector helpers (and the few libuv pool threads module loading started) run at the
// lowest priority (nice 19), so on a busy or pinned core their concurrent marking yields to the event
// loop and the store's writer thread instead of stalling both for tens of milliseconds (measured:
// sendack p99 at 5k msg/s 42-97 ms without, 13-18 ms with; BENCHMARKS.md). Threads started later, the
// writer's included, keep normal priority; on idle cores the helpers run as before. Linux only.
let threads = [];
try {
  threads = readdirSync('/proc/self/task');
} catch {
  // No /proc (not Linux): priorities stay as they are.
}
for (const tid of threads) {
  if (tid === String(process.pid)) continue;
  try {
    setPriority(Number(tid), 19);
  } catch {
    // The thread ended meanwhile.
  }
}

try {
  await import('@parley/server/cli');
} catch (err) {
  const missing = err?.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes("/dist/cli.js'");
  if (!missing || existsSync(new URL('../dist/cli.js', import.meta.url))) throw err;
  process.stderr.write('parley: dist/ has not been built; run `npm run build` at the repository root\n');
  process.exit(1);
}
