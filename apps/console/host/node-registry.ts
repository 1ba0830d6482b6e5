import { MAX_CONSOLE_NODES, type ConsoleNode } from '@parley/shared';

/** A configured node as the host keeps it; `token` stays in the host. */
export interface NodeEntry {
  id: string;
  url: string;
  name?: string;
  token?: string;
}

/**
 * A node base URL made canonical: http(s) only, no credentials, query or
 * fragment, no trailing slash. Its id (host-port, plus the path when there is
 * one) is stable across launches, so saved contexts and links keep working.
 */
export function normaliseNodeUrl(raw: string): { url: string; id: string } | { error: string } {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    return { error: 'not a URL' };
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return { error: 'only http and https node URLs are supported' };
  if (u.username || u.password) return { error: 'a node URL must not carry credentials' };
  if (u.search || u.hash) return { error: 'a node URL must not carry a query or fragment' };
  const path = u.pathname.replace(/\/+$/, '');
  const url = `${u.origin}${path}`;
  const port = u.port || (u.protocol === 'https:' ? '443' : '80');
  const id = `${u.hostname}-${port}${path}`
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return { url, id };
}

/** Why `add` refused a node. */
export type AddNodeError = { code: 'invalid_request' | 'duplicate_node' | 'too_many_nodes'; message: string };

/**
 * The nodes a host may proxy to: the allowlist of `ops:get`. `onChange`
 * receives every entry (tokens included) after each change, for a host
 * that persists them (Electron keeps tokens encrypted, the web host keeps
 * everything in memory for the launch).
 */
export class NodeRegistry {
  private readonly entries = new Map<string, NodeEntry>();

  constructor(
    initial: readonly NodeEntry[] = [],
    private readonly onChange?: (entries: NodeEntry[]) => void,
  ) {
    for (const e of initial) this.entries.set(e.id, { ...e });
  }

  list(): ConsoleNode[] {
    return [...this.entries.values()].map(publicNode);
  }

  get(id: string): NodeEntry | undefined {
    return this.entries.get(id);
  }

  add(rawUrl: string, name?: string): ConsoleNode | AddNodeError {
    const n = normaliseNodeUrl(rawUrl);
    if ('error' in n) return { code: 'invalid_request', message: n.error };
    if (this.entries.has(n.id)) return { code: 'duplicate_node', message: `node ${n.url} is already configured` };
    if (this.entries.size >= MAX_CONSOLE_NODES) return { code: 'too_many_nodes', message: `at most ${MAX_CONSOLE_NODES} nodes` };
    const entry: NodeEntry = { id: n.id, url: n.url };
    const trimmed = name?.trim();
    if (trimmed) entry.name = trimmed;
    this.entries.set(n.id, entry);
    this.changed();
    return publicNode(entry);
  }

  remove(id: string): boolean {
    const had = this.entries.delete(id);
    if (had) this.changed();
    return had;
  }

  setToken(id: string, token: string): ConsoleNode | undefined {
    const e = this.entries.get(id);
    if (!e) return undefined;
    if (token) e.token = token;
    else delete e.token;
    this.changed();
    return publicNode(e);
  }

  private changed(): void {
    this.onChange?.([...this.entries.values()].map((e) => ({ ...e })));
  }
}

function publicNode(e: NodeEntry): ConsoleNode {
  const n: ConsoleNode = { id: e.id, url: e.url, has_token: Boolean(e.token) };
  if (e.name) n.name = e.name;
  return n;
}
