import type { HostHandlers, HostResult } from '../contract.ts';

/** Largest JSON body a migration route reads (a plan with many policy entries), bytes. */
export const MIGRATION_MAX_BODY_BYTES = 4 * 1024 * 1024;

type Reply = HostResult<unknown> | { status: number; error: string; code: string };

const seg = '([^/]+)';
const ROUTES: Array<{
  method: string;
  re: RegExp;
  call: (h: HostHandlers, m: string[], body: Record<string, unknown>, q: URLSearchParams) => Promise<HostResult<unknown>>;
}> = [
  { method: 'GET', re: /^\/api\/migration$/, call: (h) => h['migration:state'](undefined) },
  { method: 'PUT', re: /^\/api\/migration\/root$/, call: (h, _m, b) => h['migration:set-root'](b) },
  { method: 'POST', re: /^\/api\/migration\/plans$/, call: (h, _m, b) => h['migration:save-plan'](b) },
  { method: 'GET', re: new RegExp(`^/api/migration/plans/${seg}$`), call: (h, m) => h['migration:plan']({ plan_id: m[0] }) },
  {
    method: 'GET',
    re: new RegExp(`^/api/migration/plans/${seg}/reports/${seg}$`),
    call: (h, m) => h['migration:report']({ plan_id: m[0], file: m[1] }),
  },
  {
    method: 'POST',
    re: new RegExp(`^/api/migration/plans/${seg}/runs$`),
    call: (h, m, b) => h['migration:run-start']({ ...b, plan_id: m[0] }),
  },
  {
    method: 'POST',
    re: new RegExp(`^/api/migration/plans/${seg}/db-info$`),
    call: (h, m, b) => h['migration:db-info']({ ...b, plan_id: m[0] }),
  },
  {
    method: 'GET',
    re: new RegExp(`^/api/migration/runs/${seg}$`),
    call: (h, m, _b, q) => {
      const since = q.get('since');
      return h['migration:run-status']({ run_id: m[0], ...(since !== null && /^\d{1,9}$/.test(since) ? { since: Number(since) } : {}) });
    },
  },
  { method: 'POST', re: new RegExp(`^/api/migration/runs/${seg}/cancel$`), call: (h, m) => h['migration:run-cancel']({ run_id: m[0] }) },
  {
    method: 'PUT',
    re: new RegExp(`^/api/migration/checklists/${seg}/items/${seg}$`),
    call: (h, m, b) => h['migration:tick']({ ...b, scope: m[0], item: m[1] }),
  },
  {
    method: 'PUT',
    re: new RegExp(`^/api/migration/checklists/${seg}/fields$`),
    call: (h, m, b) => h['migration:set-fields']({ scope: m[0], fields: b }),
  },
  {
    method: 'POST',
    re: new RegExp(`^/api/migration/checklists/${seg}/checks/${seg}$`),
    call: (h, m, b) => h['migration:check']({ ...b, scope: m[0], kind: m[1] }),
  },
];

/**
 * The wizard's part of the loopback API: REST-shaped paths onto the same
 * handlers Electron reaches over IPC. Path segments are decoded here and
 * checked by the handlers' schemas like every other payload field.
 */
export async function migrationRoute(
  handlers: HostHandlers,
  method: string,
  path: string,
  query: URLSearchParams,
  body: unknown,
): Promise<Reply> {
  let known = false;
  for (const r of ROUTES) {
    const m = r.re.exec(path);
    if (!m) continue;
    known = true;
    if (r.method !== method) continue;
    let parts: string[];
    try {
      parts = m.slice(1).map((x) => decodeURIComponent(x));
    } catch {
      return { status: 400, error: 'bad path encoding', code: 'invalid_request' };
    }
    const b = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
    return r.call(handlers, parts, b, query);
  }
  return known
    ? { status: 405, error: 'method not allowed', code: 'method_not_allowed' }
    : { status: 404, error: 'no such console route', code: 'not_found' };
}
