import { useSyncExternalStore } from 'react';

/** Refresh choices, ms; 0 is "off". */
export const REFRESH_CHOICES = [1000, 2000, 5000, 10000, 30000, 0] as const;
/** Aggregation windows the snapshot is asked for (server minimum 2 s). */
export const WINDOW_CHOICES = ['10s', '30s', '1m', '5m'] as const;
/** Chart ranges, seconds. */
export const RANGE_CHOICES = [60, 300, 900] as const;

export type LocalePref = 'auto' | 'en' | 'zh-CN';
export type SchemePref = 'auto' | 'light' | 'dark';

/** A named subset of the configured nodes, by node id. */
export interface NodeContext {
  name: string;
  nodeIds: string[];
}

/** The page-level controls every page shares, kept in localStorage (no secrets here). */
export interface Controls {
  refreshMs: number;
  paused: boolean;
  window: (typeof WINDOW_CHOICES)[number];
  rangeSec: number;
  /** Name of the selected context; '' is "all nodes". */
  context: string;
  contexts: NodeContext[];
  locale: LocalePref;
  scheme: SchemePref;
}

export const DEFAULT_CONTROLS: Controls = {
  refreshMs: 2000,
  paused: false,
  window: '10s',
  rangeSec: 300,
  context: '',
  contexts: [],
  locale: 'auto',
  scheme: 'auto',
};

const KEY = 'parley.console.controls.v1';

function load(): Controls {
  try {
    const raw = localStorage.getItem(KEY);
    if (!raw) return DEFAULT_CONTROLS;
    const saved = JSON.parse(raw) as Partial<Controls>;
    const c = { ...DEFAULT_CONTROLS, ...saved };
    if (!(REFRESH_CHOICES as readonly number[]).includes(c.refreshMs)) c.refreshMs = DEFAULT_CONTROLS.refreshMs;
    if (!(WINDOW_CHOICES as readonly string[]).includes(c.window)) c.window = DEFAULT_CONTROLS.window;
    if (!(RANGE_CHOICES as readonly number[]).includes(c.rangeSec)) c.rangeSec = DEFAULT_CONTROLS.rangeSec;
    if (!Array.isArray(c.contexts)) c.contexts = [];
    return c;
  } catch {
    return DEFAULT_CONTROLS;
  }
}

let state: Controls = typeof localStorage === 'undefined' ? DEFAULT_CONTROLS : load();
const listeners = new Set<() => void>();

export function setControls(patch: Partial<Controls>): void {
  state = { ...state, ...patch };
  try {
    localStorage.setItem(KEY, JSON.stringify(state));
  } catch {
    // storage full or disabled: the controls still work for this page
  }
  for (const l of listeners) l();
}

function subscribe(l: () => void): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

export function useControls(): Controls {
  return useSyncExternalStore(subscribe, () => state);
}

/** The interval queries poll at: false when paused or off. */
export function pollInterval(c: Pick<Controls, 'refreshMs' | 'paused'>): number | false {
  return c.paused || c.refreshMs === 0 ? false : c.refreshMs;
}
