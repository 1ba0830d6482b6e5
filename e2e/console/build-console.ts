import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONSOLE_ROOT, sourceHash } from '../../apps/console/build/source-hash.ts';

/**
 * Vitest global setup of the e2e project: the browser tests drive the built
 * console (what `parleyctl console` serves), so build it when dist is missing
 * or was built from other sources (dist/.source-hash). About 3 s.
 */
export default function buildConsole(): void {
  const stamp = join(CONSOLE_ROOT, 'dist', '.source-hash');
  const want = sourceHash();
  if (existsSync(join(CONSOLE_ROOT, 'dist', 'index.html')) && existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === want) return;
  const r = spawnSync('npm', ['run', 'build', '-w', 'apps/console'], {
    cwd: join(CONSOLE_ROOT, '..', '..'),
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`building the console failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  if (readFileSync(stamp, 'utf8').trim() !== want) throw new Error('the console build did not record its source hash');
}
