/**
 * Bundles the published `wukongimjssdk` (ESM with extension-less imports and
 * no "type":"module", so plain Node cannot load it) into one CommonJS file
 * with esbuild. The bundle is cached in the OS temp dir, keyed by the SDK's
 * version and the size/mtime of its entry, and written atomically so parallel
 * test workers can share it.
 */
import { mkdir, rename, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { build } from 'esbuild';

const require = createRequire(import.meta.url);
let pending: Promise<string> | undefined;

async function buildOnce(): Promise<string> {
  const entry = require.resolve('wukongimjssdk/lib/index.js');
  const pkg = require(join(dirname(entry), '..', 'package.json')) as { version: string };
  const st = await stat(entry);
  const dir = join(tmpdir(), 'parley-e2e-sdk');
  const out = join(dir, `wukongimjssdk-${pkg.version}-${st.size}-${Math.floor(st.mtimeMs)}.cjs`);
  if (
    await stat(out).then(
      () => true,
      () => false,
    )
  )
    return out;
  await mkdir(dir, { recursive: true });
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    write: false,
    logLevel: 'silent',
  });
  const code = result.outputFiles[0]?.contents;
  if (!code) throw new Error('esbuild produced no output for wukongimjssdk');
  const tmp = `${out}.${process.pid}.${Date.now()}.tmp`;
  await writeFile(tmp, code);
  await rename(tmp, out);
  return out;
}

/** Path of a CommonJS bundle of wukongimjssdk whose `default` export is `WKSDK`. */
export function sdkBundlePath(): Promise<string> {
  pending ??= buildOnce();
  return pending;
}
