import type { HostError, OpsGetRequest, OpsReply } from '@parley/shared';
import type { HostFailure, HostResult, WkDesktop } from '../../host/contract.ts';
import type { Platform } from './platform.ts';

async function call<T>(path: string, init?: { method: string; body?: unknown }): Promise<HostResult<T>> {
  let res: Response;
  try {
    res = await fetch(path, {
      method: init?.method ?? 'GET',
      credentials: 'same-origin',
      headers: init?.body === undefined ? {} : { 'content-type': 'application/json' },
      body: init?.body === undefined ? undefined : JSON.stringify(init.body),
    });
  } catch {
    return { ok: false, error: { code: 'session_expired', error: 'the console (parleyctl console) does not answer' } };
  }
  const text = await res.text();
  if (res.ok) return { ok: true, value: (text ? JSON.parse(text) : undefined) as T };
  return { ok: false, error: hostError(res.status, text) };
}

function hostError(status: number, text: string): HostFailure {
  try {
    const j = JSON.parse(text) as Partial<HostError>;
    if (typeof j.code === 'string' && typeof j.error === 'string') return { code: j.code as HostFailure['code'], error: j.error };
  } catch {
    // fall through
  }
  return { code: status === 401 ? 'session_expired' : 'invalid_request', error: `console answered ${status}` };
}

const enc = encodeURIComponent;

async function opsGet(req: OpsGetRequest): Promise<HostResult<OpsReply>> {
  const qs = new URLSearchParams(req.query ?? {}).toString();
  const url = `/api/nodes/${encodeURIComponent(req.node)}/ops${req.path}${qs ? `?${qs}` : ''}`;
  let res: Response;
  try {
    res = await fetch(url, { credentials: 'same-origin' });
  } catch {
    return { ok: false, error: { code: 'session_expired', error: 'the console (parleyctl console) does not answer' } };
  }
  const body = await res.text();
  // The proxy marks a node's own answer; anything else is the console speaking.
  if (res.headers.get('x-parley-upstream') === '1')
    return { ok: true, value: { status: res.status, content_type: res.headers.get('content-type') ?? '', body } };
  return { ok: false, error: hostError(res.status, body) };
}

/** The host API over loopback HTTP to `parleyctl console` (session cookie, same origin). */
export function webPlatform(): Platform {
  const host: WkDesktop = {
    app: { info: () => call('/api/info') },
    nodes: {
      list: () => call('/api/nodes'),
      add: (req) => call('/api/nodes', { method: 'POST', body: req }),
      remove: (req) => call(`/api/nodes/${encodeURIComponent(req.id)}`, { method: 'DELETE', body: {} }),
      setToken: (req) => call(`/api/nodes/${encodeURIComponent(req.id)}/token`, { method: 'PUT', body: { token: req.token } }),
    },
    ops: { get: opsGet },
    migration: {
      state: () => call('/api/migration'),
      setRoot: (req) => call('/api/migration/root', { method: 'PUT', body: req }),
      savePlan: (req) => call('/api/migration/plans', { method: 'POST', body: req }),
      plan: (req) => call(`/api/migration/plans/${enc(req.plan_id)}`),
      report: (req) => call(`/api/migration/plans/${enc(req.plan_id)}/reports/${enc(req.file)}`),
      runStart: ({ plan_id, ...rest }) => call(`/api/migration/plans/${enc(plan_id)}/runs`, { method: 'POST', body: rest }),
      runStatus: (req) => call(`/api/migration/runs/${enc(req.run_id)}${req.since ? `?since=${req.since}` : ''}`),
      runCancel: (req) => call(`/api/migration/runs/${enc(req.run_id)}/cancel`, { method: 'POST', body: {} }),
      dbInfo: ({ plan_id, ...rest }) => call(`/api/migration/plans/${enc(plan_id)}/db-info`, { method: 'POST', body: rest }),
      tick: ({ scope, item, ...rest }) => call(`/api/migration/checklists/${enc(scope)}/items/${enc(item)}`, { method: 'PUT', body: rest }),
      setFields: ({ scope, fields }) => call(`/api/migration/checklists/${enc(scope)}/fields`, { method: 'PUT', body: fields }),
      check: ({ scope, kind, ...rest }) =>
        call(`/api/migration/checklists/${enc(scope)}/checks/${enc(kind)}`, { method: 'POST', body: rest }),
    },
  };
  return { kind: 'web', host, capabilities: { hostKeepsTokens: true, persistentNodes: false } };
}
