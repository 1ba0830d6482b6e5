import { createHash } from 'node:crypto';

/**
 * Hex SHA-256 of a connection token: the only form in which a credential is
 * stored (`devices.token_sha256`), by the server and by `parleyctl migrate
 * import` alike, so a copy of the database leaks no usable token.
 */
export function tokenDigest(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}
