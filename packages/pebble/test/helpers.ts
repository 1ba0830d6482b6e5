/**
 * Shared test helpers: fixture location (outside the repository, never copied
 * into it), the live-set digest of the v2 fixtures, and temp-dir copies.
 */
import { createHash } from 'node:crypto';
import { chmodSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PebbleDb } from '../src/index.ts';

/** `/work/shared/fixtures` as seen from this file: repo root + `../shared/fixtures`. */
export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '../../../../shared/fixtures');
export const PEBBLE_FIXTURES = join(FIXTURES, 'pebble');
export const V2_FIXTURES = join(FIXTURES, 'v2');
export const hasPebbleFixtures = existsSync(PEBBLE_FIXTURES);
export const hasV2Fixtures = existsSync(V2_FIXTURES);
export const SKIP_MESSAGE = `fixtures folder ${FIXTURES} is absent; skipping fixture tests`;

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
