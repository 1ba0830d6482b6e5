import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Sessions one launch keeps at once; the oldest is dropped past this. */
const MAX_SESSIONS = 64;

function digest(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

/**
 * The web host's credentials: one launch token (printed once on stdout),
 * traded on first load for a session cookie. Both are 256-bit random values
 * compared in constant time; neither is ever logged.
 */
export class ConsoleSessions {
  readonly launchToken = randomBytes(32).toString('base64url');
  private readonly launchDigest = digest(this.launchToken);
  private readonly sessions = new Set<string>();

  /** The port the console listens on, set once it does (0 before). */
  port = 0;

  /** The cookie's name; it carries the port, since browsers share cookies across ports of one host. */
  get cookieName(): string {
    return `parley_console_${this.port}`;
  }

  /** True when `token` is this launch's token. */
  tokenMatches(token: string): boolean {
    return timingSafeEqual(digest(token), this.launchDigest);
  }

  /** A new session id, to be set as an HttpOnly, SameSite=Strict cookie. */
  open(): string {
    const id = randomBytes(32).toString('base64url');
    this.sessions.add(digest(id).toString('hex'));
    if (this.sessions.size > MAX_SESSIONS) this.sessions.delete(this.sessions.values().next().value!);
    return id;
  }

  /** True when the request's Cookie header carries a live session. */
  authorised(cookieHeader: string | undefined): boolean {
    const id = readCookie(cookieHeader, this.cookieName);
    // Looked up by digest, so lookup timing says nothing about the id itself.
    return id !== undefined && this.sessions.has(digest(id).toString('hex'));
  }

  setCookie(id: string): string {
    return `${this.cookieName}=${id}; Path=/; HttpOnly; SameSite=Strict`;
  }
}

/** The value of cookie `name` in a Cookie header, if present. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
