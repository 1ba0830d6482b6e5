import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HostHandlers, HostResult } from './contract.ts';
import { hostErrorStatus } from './handlers.ts';
import { MIGRATION_MAX_BODY_BYTES, migrationRoute } from './migration/routes.ts';
import { ConsoleSessions } from './session.ts';
import { staticFile } from './static-files.ts';

/** Largest JSON body the web host reads (node URL, name, token), bytes. */
const MAX_BODY_BYTES = 16 * 1024;

/** Headers on every answer: no framing, no sniffing, no referrer (the launch URL carries the token). */
const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; font-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

export interface ConsoleServerOptions {
  /** A loopback address; `parleyctl console` refuses anything else before calling this. */
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** The built console (`apps/console/dist`). */
  staticDir: string;
  handlers: HostHandlers;
  /** Structured log lines (stderr); never given a token, a cookie or a query string. */
  log?: (line: Record<string, unknown>) => void;
}

export interface ConsoleServer {
  /** `http://host:port/` */
  origin: string;
  /** The launch URL: origin plus this launch's token, to be printed once. */
  launchUrl: string;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body: string | Buffer, type: string, extra: Record<string, string> = {}): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type, 'cache-control': 'no-store', ...extra });
  res.end(body);
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  send(res, status, JSON.stringify(value), 'application/json; charset=utf-8');
}

function sendResult<T>(res: ServerResponse, r: HostResult<T>, okStatus = 200): void {
  if (r.ok) sendJson(res, okStatus, r.value);
  else sendJson(res, hostErrorStatus(r.error.code), r.error);
}

const UNAUTHORISED_PAGE = `<!doctype html><meta charset="utf-8"><title>Parley console</title>
<body style="font:15px system-ui;margin:3em;max-width:40em">
<h1>Parley console</h1><p>This console only opens from the address <code>parleyctl console</code> printed when it started
(it carries a one-time token). Open that address again, or restart <code>parleyctl console</code>.</p>`;

async function readJson(req: IncomingMessage, max: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > max) throw new Error('body too large');
    chunks.push(chunk);
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
}

/** Host header values that name this server on loopback (a guard against DNS rebinding). */
function allowedHosts(port: number): Set<string> {
  return new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]);
}

/**
 * The web host of the console: serves the built app and the host contract
 * over loopback HTTP. Every request needs the session cookie, or the launch
 * token on a page load (which is then traded for the cookie and dropped from
 * the address bar by a redirect); anything else gets 401.
 */
export async function startConsoleServer(opts: ConsoleServerOptions): Promise<ConsoleServer> {
  const log = opts.log ?? (() => {});
  const { handlers } = opts;
  const sessions = new ConsoleSessions();
  /** Host header values naming this server, filled in once it listens (empty: every request refused). */
  const hosts = new Set<string>();

  const api = async (req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams): Promise<void> => {
    const method = req.method ?? 'GET';
    if (method !== 'GET') {
      // Mutations must come from the console's own page: JSON only, same origin.
      const origin = req.headers.origin;
      if (origin !== undefined && !hosts.has(origin.replace(/^http:\/\//, '')))
        return sendJson(res, 403, { error: 'cross-origin request refused', code: 'forbidden' });
      if (!(req.headers['content-type'] ?? '').startsWith('application/json'))
        return sendJson(res, 415, { error: 'send application/json', code: 'invalid_request' });
    }
    const wizard = path === '/api/migration' || path.startsWith('/api/migration/');
    const max = wizard ? MIGRATION_MAX_BODY_BYTES : MAX_BODY_BYTES;
    let payload: unknown;
    if (method === 'POST' || method === 'PUT') {
      try {
        payload = await readJson(req, max);
      } catch {
        return sendJson(res, 400, { error: `the body is not JSON of at most ${max / 1024} KiB`, code: 'invalid_request' });
      }
    }
    if (wizard) {
      const r = await migrationRoute(handlers, method, path, query, payload);
      if ('status' in r) return sendJson(res, r.status, { error: r.error, code: r.code });
      return sendResult(res, r, method === 'POST' && path.endsWith('/plans') ? 201 : 200);
    }
    if (path === '/api/info' && method === 'GET') return sendResult(res, await handlers['app:info'](undefined));
    if (path === '/api/nodes') {
      if (method === 'GET') return sendResult(res, await handlers['nodes:list'](undefined));
      if (method === 'POST') return sendResult(res, await handlers['nodes:add'](payload), 201);
      return sendJson(res, 405, { error: 'method not allowed', code: 'method_not_allowed' });
    }
    const m = /^\/api\/nodes\/([^/]+)(\/token|\/ops(\/.*))?$/.exec(path);
    if (!m) return sendJson(res, 404, { error: 'no such console route', code: 'not_found' });
    const id = decodeURIComponent(m[1]!);
    if (m[2] === undefined) {
      if (method === 'DELETE') return sendResult(res, await handlers['nodes:remove']({ id }));
      return sendJson(res, 405, { error: 'method not allowed', code: 'method_not_allowed' });
    }
    if (m[2] === '/token') {
      if (method !== 'PUT') return sendJson(res, 405, { error: 'method not allowed', code: 'method_not_allowed' });
      const token = (payload as { token?: unknown } | null)?.token;
      return sendResult(res, await handlers['nodes:set-token']({ id, token }));
    }
    if (method !== 'GET') return sendJson(res, 405, { error: 'the console forwards GET requests only', code: 'method_not_allowed' });
    const r = await handlers['ops:get']({ node: id, path: m[3], query: Object.fromEntries(query) });
    if (!r.ok) return sendResult(res, r);
    // A node's own answer: marked, so the page can tell it from the console's.
    send(res, r.value.status, r.value.body, r.value.content_type || 'application/octet-stream', { 'x-parley-upstream': '1' });
  };

  const server = createServer((req, res) => {
    void (async () => {
      if (!hosts.has(req.headers.host ?? '')) return send(res, 421, 'unknown host\n', 'text/plain; charset=utf-8');
      const url = new URL(req.url ?? '/', 'http://console.invalid');
      const token = url.searchParams.get('token');
      if (token !== null) {
        if (req.method !== 'GET' || !sessions.tokenMatches(token)) return send(res, 401, UNAUTHORISED_PAGE, 'text/html; charset=utf-8');
        url.searchParams.delete('token');
        const location = `${url.pathname}${url.search}`;
        return send(res, 302, '', 'text/plain', { location, 'set-cookie': sessions.setCookie(sessions.open()) });
      }
      if (!sessions.authorised(req.headers.cookie)) {
        if (url.pathname.startsWith('/api/')) return sendJson(res, 401, { error: 'console session required', code: 'session_expired' });
        return send(res, 401, UNAUTHORISED_PAGE, 'text/html; charset=utf-8');
      }
      if (url.pathname.startsWith('/api/')) return api(req, res, url.pathname, url.searchParams);
      if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'method not allowed\n', 'text/plain; charset=utf-8');
      const file = await staticFile(opts.staticDir, url.pathname);
      if (!file) return send(res, 404, 'not found\n', 'text/plain; charset=utf-8');
      send(res, 200, file.body, file.type, { 'cache-control': file.immutable ? 'public, max-age=31536000, immutable' : 'no-store' });
    })().catch((err: unknown) => {
      log({ level: 'error', msg: 'console request failed', error: (err as Error).message });
      if (!res.headersSent) sendJson(res, 500, { error: 'internal error', code: 'internal' });
      else res.destroy();
    });
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  sessions.port = addr.port;
  const hostPart = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  for (const h of [...allowedHosts(addr.port), `${hostPart}:${addr.port}`]) hosts.add(h);
  const origin = `http://${hostPart}:${addr.port}/`;
  return {
    origin,
    launchUrl: `${origin}?token=${sessions.launchToken}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
