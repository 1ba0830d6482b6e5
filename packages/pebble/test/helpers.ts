/**
 * Shared test helpers: fixture locations (outside the repository, never copied
 * into it; see test-support/fixtures.ts), the live-set digest of the v2
 * fixtures, and temp-dir copies.
 */
import { createHash } from 'node:crypto';
import { chmodSync, cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixturesPresent, FIXTURES_DIR, PEBBLE_FIXTURES_DIR, V2_FIXTURES_DIR } from '../../../test-support/fixtures.ts';
import type { PebbleDb } from '../src/index.ts';

/** `../shared/fixtures` beside the repository. */
export const FIXTURES = FIXTURES_DIR;
export const PEBBLE_FIXTURES = PEBBLE_FIXTURES_DIR;
export const V2_FIXTURES = V2_FIXTURES_DIR;
/** False in a plain clone (the tests skip); under CI a missing folder throws instead. */
export const hasPebbleFixtures = fixturesPresent(PEBBLE_FIXTURES);
export const hasV2Fixtures = fixturesPresent(V2_FIXTURES);

/** SHA-256 over `u32be(len(key)) key u32be(len(value)) value` in key order, as in pebble.json. */
export function liveDigest(db: PebbleDb): { sha256: string; keys: number } {
  const h = createHash('sha256');
  const len = Buffer.alloc(4);
  let keys = 0;
  for (const e of db.iterate()) {
    keys++;
    len.writeUInt32BE(e.key.length);
    h.update(len);
    h.update(e.key);
    len.writeUInt32BE(e.value.length);
    h.update(len);
    h.update(e.value);
  }
  return { sha256: h.digest('hex'), keys };
}

const temps: string[] = [];

/** Copies a fixture directory into a fresh writable temp dir and returns the copy's path. */
export function tempCopy(src: string): string {
  const root = mkdtempSync(join(tmpdir(), 'pebble-test-'));
  temps.push(root);
  const dst = join(root, 'db');
  cpSync(src, dst, { recursive: true });
  chmodRecursive(dst);
  return dst;
}

function chmodRecursive(path: string): void {
  chmodSync(path, statSync(path).isDirectory() ? 0o755 : 0o644);
  if (statSync(path).isDirectory()) for (const f of readdirSync(path)) chmodRecursive(join(path, f));
}

/** Name, size, mode, mtime and SHA-256 of every file under `dir`, for "unchanged by reading" checks. */
export function snapshotDir(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const f of readdirSync(d).sort()) {
      const p = join(d, f);
      const st = statSync(p);
      if (st.isDirectory()) {
        out.push(`${p}/ ${st.mode}`);
        walk(p);
      } else {
        out.push(`${p} ${st.size} ${st.mode} ${st.mtimeMs} ${createHash('sha256').update(readFileSync(p)).digest('hex')}`);
      }
    }
  };
  walk(dir);
  return out;
}

/** Text of a UTF-8 byte string. */
export const text = (b: Uint8Array): string => Buffer.from(b).toString('utf8');
/** Bytes of a UTF-8 string. */
export const bytes = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'utf8'));

/** Removes every temp dir made by {@link tempCopy}. */
export function removeTempCopies(): void {
  for (const t of temps.splice(0)) rmSync(t, { recursive: true, force: true });
}
