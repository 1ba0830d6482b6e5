/**
 * The ops routes a console host forwards: GETs of health, readiness, the top
 * snapshot and the debug group, nothing else (no business routes, no bench
 * routes). Anything that could climb out of a path (`..`, encoded bytes,
 * backslashes, empty segments) is refused rather than normalised.
 */

const EXACT = new Set(['/healthz', '/readyz', '/top/v1/snapshot', '/debug']);
const SEGMENT = /^[A-Za-z0-9_~-][A-Za-z0-9._~-]*$/;

/** True when `path` is an ops route the host may forward. */
export function isAllowedOpsPath(path: string): boolean {
  if (EXACT.has(path)) return true;
  if (!path.startsWith('/debug/')) return false;
  const segments = path.slice('/debug/'.length).split('/');
  return segments.length <= 8 && segments.every((s) => SEGMENT.test(s) && !/^\.+$/.test(s));
}

/** True for paths under `/debug`, the group `bench.api_token` guards. */
export function isDebugPath(path: string): boolean {
  return path === '/debug' || path.startsWith('/debug/');
}

/**
 * The upstream URL of `path` on the node at `base` (a normalised base URL
 * without a trailing slash), or undefined if it would leave that node.
 */
export function upstreamUrl(base: string, path: string, query: Record<string, string> = {}): URL | undefined {
  const root = new URL(base);
  const url = new URL(root.href);
  url.pathname = `${root.pathname.replace(/\/+$/, '')}${path}`;
  url.search = new URLSearchParams(query).toString();
  if (url.origin !== root.origin) return undefined;
  return url;
}
