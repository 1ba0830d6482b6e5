import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The console's root folder. */
export const CONSOLE_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** What the web build is made from: its sources, the shared schemas it bundles, and its build config. */
const INPUTS = [
  'src',
  'host/contract.ts',
  'index.html',
  'package.json',
  'vite.config.ts',
  '../../vitest.shared.ts',
  '../../packages/shared/src',
];

function files(path: string): string[] {
  const st = statSync(path);
  if (st.isFile()) return [path];
  return readdirSync(path)
    .filter((n) => !n.endsWith('.test.ts') && !n.endsWith('.test.tsx'))
    .flatMap((n) => files(join(path, n)));
}

/**
 * A digest of every input of the web build (paths and contents, tests
 * excluded). The build writes it to dist/.source-hash; the browser tests
 * rebuild when it differs, so they never run against a stale console.
 */
export function sourceHash(root = CONSOLE_ROOT): string {
  const h = createHash('sha256');
  for (const f of INPUTS.flatMap((p) => files(join(root, p))).sort()) {
    h.update(relative(root, f));
    h.update('\0');
    h.update(readFileSync(f));
    h.update('\0');
  }
  return h.digest('hex');
}
