#!/usr/bin/env node
// `parleyctl` runs the compiled JavaScript in dist/ (`npm run build`; `npm ci` builds too). Started as
// `node --conditions=@parley/source --import tsx bin/parleyctl.js` (`npm run dev`, the tests), the same
// import resolves to the TypeScript sources instead: see the exports of package.json.
import process from 'node:process';
import { existsSync } from 'node:fs';

try {
  await import('@parley/migrator/cli');
} catch (err) {
  const missing = err?.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes("/dist/cli.js'");
  if (!missing || existsSync(new URL('../dist/cli.js', import.meta.url))) throw err;
  process.stderr.write('parleyctl: dist/ has not been built; run `npm run build` at the repository root\n');
  process.exit(1);
}
