import type { StoreFailureKind } from '../sqlite/write-health.ts';

/** Socket-level failures of the connection to the server (no SQLSTATE). */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * The kind of a PostgreSQL failure by its SQLSTATE (or the socket's error
 * code), or undefined for errors that are not the store's (constraints, bad
 * input, SQL errors).
 */
export function postgresFailureKind(err: unknown): StoreFailureKind | undefined {
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : undefined;
  if (code === undefined) {
    // node-postgres reports a dropped or refused connection without a code.
    const message = typeof e?.message === 'string' ? e.message : '';
    return /Connection terminated|connection timeout|Client has encountered a connection error/i.test(message) ? 'io_error' : undefined;
  }
  if (NETWORK_CODES.has(code)) return 'io_error';
  if (!/^[0-9A-Z]{5}$/.test(code)) return undefined;
  if (code === '53100') return 'disk_full';
  if (code === '25006') return 'read_only';
  if (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03') return 'io_error';
  if (code === 'XX001' || code === 'XX002') return 'corrupt';
  if (code.startsWith('40') || code === '55P03' || code === '57014' || code === '53300') return 'busy';
  // The schema or a table gone from under a running node: the store is damaged, not the request.
  if (code === '42P01' || code === '3F000') return 'other';
  if (/^(22|23|42|2B|2D|3D|3F|44|0A|P0)/.test(code)) return undefined;
  return 'other';
}
