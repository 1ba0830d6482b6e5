import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { TopReading } from '../../api/queries.ts';
import type { NodeView } from '../overview/view-model.ts';

/** A saved snapshot file: every node's last snapshot at one moment. */
export const SavedSnapshots = Type.Object({
  format: Type.Literal('parley-console-snapshots/v1'),
  saved_at: Type.String({ description: 'RFC 3339' }),
  nodes: Type.Array(
    Type.Object({
      id: Type.String(),
      url: Type.String(),
      name: Type.Optional(Type.String()),
      snapshot: TopReading,
    }),
    { maxItems: 64 },
  ),
});
export type SavedSnapshots = Static<typeof SavedSnapshots>;

/** The nodes' current snapshots as a file's content (nodes without one are left out). */
export function buildSaved(views: readonly NodeView[], now: number): SavedSnapshots {
  return {
    format: 'parley-console-snapshots/v1',
    saved_at: new Date(now).toISOString(),
    nodes: views
      .filter((v) => v.top)
      .map((v) => ({ id: v.node.id, url: v.node.url, ...(v.node.name ? { name: v.node.name } : {}), snapshot: v.top! })),
  };
}

/** Largest file the Snapshots page opens, bytes. */
export const MAX_SNAPSHOT_FILE = 32 * 1024 * 1024;

/**
 * A saved file read back: the console's own format, or a single raw
 * `/top/v1/snapshot` answer (as saved with curl). Errors name the first
 * schema problem.
 */
export function readSaved(text: string): { ok: true; value: SavedSnapshots } | { ok: false; error: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, error: 'not JSON' };
  }
  if (Value.Check(SavedSnapshots, json)) return { ok: true, value: json };
  if (Value.Check(TopReading, json)) {
    return {
      ok: true,
      value: {
        format: 'parley-console-snapshots/v1',
        saved_at: json.generated_at,
        nodes: [{ id: `node-${json.node.id}`, url: '', name: json.node.name, snapshot: json }],
      },
    };
  }
  const first = Value.Errors(SavedSnapshots, json).First();
  return { ok: false, error: first ? `${first.path || '/'}: ${first.message}` : 'not a snapshot file' };
}

/** Node views of a saved file: current as of the file, read-only. */
export function savedViews(saved: SavedSnapshots): NodeView[] {
  return saved.nodes.map((n) => ({
    node: { id: n.id, url: n.url, ...(n.name ? { name: n.name } : {}), has_token: false },
    status: { kind: 'ok', stale: false },
    top: n.snapshot,
  }));
}

/** File name of a saved snapshot: parley-snapshots-20260101T120000Z.json. */
export function savedFileName(savedAt: string): string {
  return `parley-snapshots-${savedAt.replace(/[-:]/g, '').replace(/\.\d+/, '')}.json`;
}
