/**
 * The HTTP helpers every workspace's tests share: one request function over a
 * real socket (a base URL) or in process (a function standing for
 * `app.inject`), the same result either way, and a deadline poll.
 */

export interface HttpResult {
  status: number;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: any;
  headers: Headers;
}

export interface HttpRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  /** The body as sent, or undefined for none. */
  body: string | undefined;
}

/** Where requests go: a base URL (`http://127.0.0.1:port`), or an in-process handler such as `app.inject`. */
export type HttpTarget = string | ((request: HttpRequest) => Promise<{ status: number; text: string; headers: Headers }>);

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * One request. A `body` that is a string is sent as it is, anything else as
 * JSON; either way with `content-type: application/json` unless `headers` say
 * otherwise. No body: GET, else POST, unless `method` says.
 */
export async function request(
  target: HttpTarget,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<HttpResult> {
  const body = init.body === undefined ? undefined : typeof init.body === 'string' ? init.body : JSON.stringify(init.body);
  const req: HttpRequest = {
    method: init.method ?? (body === undefined ? 'GET' : 'POST'),
    path,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
    body,
  };
  if (typeof target !== 'string') {
    const res = await target(req);
    return { ...res, json: parse(res.text) };
  }
  const res = await fetch(target + path, { method: req.method, headers: req.headers, body });
  const text = await res.text();
  return { status: res.status, text, json: parse(text), headers: res.headers };
}

/** POSTs `body` as JSON (or, with `raw`, the string as it is). */
export function post(target: HttpTarget, path: string, body: unknown, raw = false): Promise<HttpResult> {
  return request(target, path, { method: 'POST', body: raw ? body : JSON.stringify(body) });
}

export function get(target: HttpTarget, path: string): Promise<HttpResult> {
  return request(target, path);
}

/** A request to a full URL (ops routes, headers of their own). */
export function call(url: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}): Promise<HttpResult> {
  return request(url, '', init);
}

/** Polls `probe` every 50 ms until it returns a value, or fails after `timeoutMs`. */
export async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs = 5000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Stores a token over HTTP (`/user/token`) and fails unless it was accepted. */
export async function storeToken(target: HttpTarget, uid: string, token: string, deviceFlag = 1, deviceLevel = 0): Promise<void> {
  const r = await post(target, '/user/token', { uid, token, device_flag: deviceFlag, device_level: deviceLevel });
  if (r.status !== 200) throw new Error(`token not stored: ${r.status} ${r.text}`);
}

/** Extracts every exact `message_id` integer literal from a JSON text, in order. */
export function rawMessageIds(text: string): string[] {
  return [...text.matchAll(/"message_id":(\d+)/g)].map((m) => m[1]!);
}
