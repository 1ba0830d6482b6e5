import type { HostChannel, HostResult, WkDesktop } from '../host/contract.ts';

/** Sends one request to main and returns its answer (`ipcRenderer.invoke` in the preload). */
export type Invoke = (channel: HostChannel, payload?: unknown) => Promise<unknown>;

/**
 * The `wkDesktop` object the preload exposes: one method per contract
 * channel, nothing else (no raw ipcRenderer, no generic send). Pure, so the
 * contract can be tested without Electron.
 */
export function createBridge(invoke: Invoke): WkDesktop {
  const call = <T>(channel: HostChannel, payload?: unknown) => invoke(channel, payload) as Promise<HostResult<T>>;
  return {
    app: { info: () => call('app:info') },
    nodes: {
      list: () => call('nodes:list'),
      add: (req) => call('nodes:add', req),
      remove: (req) => call('nodes:remove', req),
      setToken: (req) => call('nodes:set-token', req),
    },
    ops: { get: (req) => call('ops:get', req) },
    migration: {
      state: () => call('migration:state'),
      setRoot: (req) => call('migration:set-root', req),
      savePlan: (req) => call('migration:save-plan', req),
      plan: (req) => call('migration:plan', req),
      report: (req) => call('migration:report', req),
      runStart: (req) => call('migration:run-start', req),
      runStatus: (req) => call('migration:run-status', req),
      runCancel: (req) => call('migration:run-cancel', req),
      dbInfo: (req) => call('migration:db-info', req),
      tick: (req) => call('migration:tick', req),
      setFields: (req) => call('migration:set-fields', req),
      check: (req) => call('migration:check', req),
    },
  };
}
