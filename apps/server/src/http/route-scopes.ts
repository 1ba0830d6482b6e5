import type { ApiScope } from '../config/api-access.ts';

/**
 * What a route needs: an API key scope, nothing (`public`: health, readiness,
 * top, metrics, the OpenAPI document), or the bench bearer token (`bench`:
 * `/debug/*`, `/bench/v1/*`, checked by their own groups).
 */
export type RouteAccess = ApiScope | 'public' | 'bench';

export interface RouteRule {
  access: RouteAccess;
  /** Credential or membership change: one audit log line per request. */
  audit?: 'credential' | 'membership' | 'system';
  /** Counted against the per-key and per-uid credential rate limits. */
  rateLimited?: boolean;
}

const R = (access: RouteAccess, audit?: RouteRule['audit'], rateLimited = false): RouteRule => ({ access, audit, rateLimited });

/**
 * Every business operation's scope, keyed `METHOD path`. A route missing here
 * needs `admin` (deny by default), and a test fails for it.
 */
export const ROUTE_RULES: Readonly<Record<string, RouteRule>> = {
  'GET /route': R('read'),
  'POST /route/batch': R('read'),
  'POST /user/token': R('tokens', 'credential', true),
  'POST /user/device_quit': R('tokens', 'credential', true),
  'POST /user/onlinestatus': R('read'),
  'POST /user/systemuids_add': R('admin', 'system'),
  'POST /user/systemuids_remove': R('admin', 'system'),
  'GET /user/systemuids': R('read'),
  'POST /user/systemuids_add_to_cache': R('admin', 'system'),
  'POST /user/systemuids_remove_from_cache': R('admin', 'system'),
  'POST /channel': R('channels', 'membership'),
  'POST /channel/info': R('channels', 'membership'),
  'POST /channel/delete': R('channels', 'membership'),
  'POST /channel/subscriber_add': R('channels', 'membership'),
  'POST /channel/subscriber_remove': R('channels', 'membership'),
  'POST /channel/subscriber_remove_all': R('channels', 'membership'),
  'POST /tmpchannel/subscriber_set': R('channels', 'membership'),
  'POST /channel/blacklist_add': R('channels', 'membership'),
  'POST /channel/blacklist_set': R('channels', 'membership'),
  'POST /channel/blacklist_remove': R('channels', 'membership'),
  'POST /channel/blacklist_remove_all': R('channels', 'membership'),
  'POST /channel/whitelist_add': R('channels', 'membership'),
  'POST /channel/whitelist_set': R('channels', 'membership'),
  'POST /channel/whitelist_remove': R('channels', 'membership'),
  'POST /channel/whitelist_remove_all': R('channels', 'membership'),
  'GET /channel/whitelist': R('read'),
  'POST /message/send': R('send'),
  'POST /message/event': R('send'),
  'POST /channel/messagesync': R('read'),
  'POST /channel/messagesyncbatch': R('read'),
  'POST /message/sync': R('read'),
  'POST /message/syncack': R('read'),
  'POST /message/cmd/bind': R('channels', 'membership'),
  'POST /message/cmd/unbind': R('channels', 'membership'),
  'POST /conversation/list': R('read'),
  'POST /conversation/retry': R('read'),
  'POST /conversations/clearUnread': R('read'),
  'POST /conversations/setUnread': R('read'),
  'POST /conversations/delete': R('read'),
  'POST /conversations/activate': R('read'),
  'POST /conversation/sync': R('read'),
  'POST /messages': R('read'),
  'POST /message/sendbatch': R('send'),
  'GET /channel/max_message_seq': R('read'),
  'GET /channel/last_message': R('read'),
  'POST /message/eventsync': R('read'),
  'POST /conn/kick': R('tokens', 'credential'),
  'POST /conn/remove': R('tokens', 'credential'),
};

/** Operations routes: open by contract (health, readiness, top), or guarded by their own group. */
const OPS_PREFIXES: ReadonlyArray<[RegExp, RouteAccess]> = [
  [/^\/(healthz|readyz|metrics)$/, 'public'],
  [/^\/top\/v1\//, 'public'],
  [/^\/docs\//, 'public'],
  [/^\/debug(\/|$)/, 'bench'],
  [/^\/bench\/v1\//, 'bench'],
];

/** The rule of a registered route (`url` as registered, e.g. `/debug/pprof/*`). */
export function ruleFor(method: string, url: string): RouteRule {
  const rule = ROUTE_RULES[`${method === 'HEAD' ? 'GET' : method} ${url}`];
  if (rule) return rule;
  for (const [re, access] of OPS_PREFIXES) if (re.test(url)) return { access };
  return { access: 'admin' };
}
