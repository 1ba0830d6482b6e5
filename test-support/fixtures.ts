/**
 * Where the tests find the recorded WuKongIM v2 data directories and Pebble
 * databases: the product owner's folder `../shared/fixtures` beside the
 * repository, read in place and never copied into it. A plain clone has no
 * such folder: the fixture tests are then reported as skipped, with one
 * message for the whole run (`global-setup.ts`). Under CI (`CI=true`) they
 * must run, so a missing folder fails the run and names it.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** `<repository>/../shared/fixtures`, absolute. */
export const FIXTURES_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'shared', 'fixtures');
/** The recorded v2 data directories (`<name>/datadir`, `expected.json`, `pebble.json`). */
export const V2_FIXTURES_DIR = join(FIXTURES_DIR, 'v2');
/** Pebble's own test databases and tables. */
export const PEBBLE_FIXTURES_DIR = join(FIXTURES_DIR, 'pebble');

/** Whether fixture tests must run instead of skipping: `CI` set to anything but empty, `0` or `false`. */
export const fixturesRequired = !['', '0', 'false'].includes((process.env.CI ?? '').toLowerCase());

/** The fixture folders that are absent. */
export function missingFixtureDirs(): string[] {
  return [V2_FIXTURES_DIR, PEBBLE_FIXTURES_DIR].filter((dir) => !existsSync(dir));
}

/** What is missing, and what follows from it. */
export function missingFixturesMessage(missing: readonly string[]): string {
  const what = `test fixtures missing: ${missing.join(', ')} (the ../shared/fixtures folder beside the repository)`;
  return fixturesRequired
    ? `${what}; CI=true requires them, so the run fails instead of skipping their tests`
    : `${what}; the tests that read them are skipped`;
}

/**
 * Whether `dir` (one of the fixture folders) is there. Absent: false, so its
 * tests skip; under CI it throws instead, failing every test file that reads
 * fixtures with a message naming the folder.
 */
export function fixturesPresent(dir: string): boolean {
  if (existsSync(dir)) return true;
  if (fixturesRequired) throw new Error(missingFixturesMessage([dir]));
  return false;
}
