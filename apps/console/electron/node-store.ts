import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { NodeEntry } from '../host/node-registry.ts';

/** Encrypts tokens at rest (Electron's `safeStorage`); `available` false means keep them in memory only. */
export interface Secrets {
  available: boolean;
  encrypt(plain: string): Buffer;
  decrypt(sealed: Buffer): string;
}

const Saved = Type.Object({
  nodes: Type.Array(Type.Object({ id: Type.String(), url: Type.String(), name: Type.Optional(Type.String()) }), { maxItems: 64 }),
  tokens: Type.Record(Type.String(), Type.String({ description: 'base64 of the safeStorage-encrypted token' })),
});

/**
 * The desktop console's node list in the user data folder: URLs and names
 * as JSON, tokens only encrypted by the OS (never in plain text; not saved at
 * all when encryption is unavailable, e.g. Linux without a keyring).
 */
export class NodeStore {
  /** Saves run one after another: a quick add-then-set-token must not race on the temp file. */
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly file: string,
    private readonly secrets: Secrets,
  ) {}

  /** The saved entries; an unreadable or invalid file is treated as empty (and replaced on the next save). */
  async load(): Promise<NodeEntry[]> {
    let json: unknown;
    try {
      json = JSON.parse(await readFile(this.file, 'utf8'));
    } catch {
      return [];
    }
    if (!Value.Check(Saved, json)) return [];
    return json.nodes.map((n) => {
      const e: NodeEntry = { ...n };
      const sealed = json.tokens[n.id];
      if (sealed && this.secrets.available) {
        try {
          e.token = this.secrets.decrypt(Buffer.from(sealed, 'base64'));
        } catch {
          // a token sealed by another user or machine: ask again
        }
      }
      return e;
    });
  }

  /** Writes atomically (temp file + rename), after any save still in progress. */
  save(entries: readonly NodeEntry[]): Promise<void> {
    const run = this.queue.then(() => this.write(entries));
    this.queue = run.catch(() => {});
    return run;
  }

  private async write(entries: readonly NodeEntry[]): Promise<void> {
    const tokens: Record<string, string> = {};
    if (this.secrets.available) for (const e of entries) if (e.token) tokens[e.id] = this.secrets.encrypt(e.token).toString('base64');
    const nodes = entries.map(({ id, url, name }) => (name ? { id, url, name } : { id, url }));
    await mkdir(dirname(this.file), { recursive: true });
    const tmp = `${this.file}.tmp`;
    await writeFile(tmp, `${JSON.stringify({ nodes, tokens }, null, 2)}\n`, { mode: 0o600 });
    await rename(tmp, this.file);
  }
}
