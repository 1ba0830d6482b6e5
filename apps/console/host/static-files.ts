import { readFile, stat } from 'node:fs/promises';
import { extname, join, resolve, sep } from 'node:path';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

export interface StaticFile {
  body: Buffer;
  type: string;
  /** Hashed build assets never change under their name; index.html always may. */
  immutable: boolean;
}

/**
 * A file of the built console for a request path, with the single-page
 * fallback: a path without an extension is a client route and gets
 * index.html. Paths that would leave `root` get nothing.
 */
export async function staticFile(root: string, pathname: string): Promise<StaticFile | undefined> {
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    return undefined;
  }
  if (decoded.includes('\0')) return undefined;
  const base = resolve(root);
  const ext = extname(decoded);
  const target = ext === '' ? join(base, 'index.html') : resolve(base, `.${decoded}`);
  if (target !== base && !target.startsWith(base + sep)) return undefined;
  try {
    if (!(await stat(target)).isFile()) return undefined;
    const body = await readFile(target);
    return { body, type: TYPES[extname(target)] ?? 'application/octet-stream', immutable: decoded.startsWith('/assets/') };
  } catch {
    return undefined;
  }
}
