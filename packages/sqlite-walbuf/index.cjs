'use strict';
// The built extension's path when `npm ci` built it (node-gyp), else undefined with the reason.
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const built = join(__dirname, 'build', 'Release', 'walbuf.node');
const path = existsSync(built) ? built : undefined;
const loadError = path
  ? undefined
  : new Error(`@parley/sqlite-walbuf was not built (no ${built}); run \`npm run build -w @parley/sqlite-walbuf\``);
/** SQLite's entry point of the extension. */
const entryPoint = 'sqlite3_walbuf_init';
module.exports = { path, entryPoint, loadError };
