import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/**
 * Whether an `Authorization` header carries exactly `Bearer <token>`.
 * Compares SHA-256 digests in constant time, so neither the token's content
 * nor its length leaks through timing. An empty `token` means no
 * authentication is configured: every request passes.
 */
export function bearerAllows(token: string, header: string | undefined): boolean {
  if (token === '') return true;
  if (header === undefined || !header.startsWith('Bearer ')) return false;
  return timingSafeEqual(digest(header.slice('Bearer '.length)), digest(token));
}

/** Body of the 401 both guarded groups answer. */
export const BEARER_REQUIRED = 'bench bearer token required';
