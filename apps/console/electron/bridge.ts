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
  };
}
