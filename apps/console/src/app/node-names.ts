import { useSyncExternalStore } from 'react';
import type { ConsoleNode } from '@parley/shared';

/** The names nodes call themselves (`node.name` of their last snapshot), for navigation and pickers. */
const names = new Map<string, string>();
const listeners = new Set<() => void>();
let version = 0;

export function learnNodeName(id: string, name: string): void {
  if (names.get(id) === name) return;
  names.set(id, name);
  version++;
  for (const l of listeners) l();
}

function subscribe(l: () => void): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

/** host:port of a URL, or the URL itself. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** A function naming a node: its configured name, else the name it reports, else host:port. */
export function useNodeName(): (n: ConsoleNode) => string {
  useSyncExternalStore(subscribe, () => version);
  return (n) => n.name ?? names.get(n.id) ?? hostOf(n.url);
}
