import type { PatchOp } from './findings.ts';

/** A JSON Pointer (RFC 6901) from path segments. */
export function pointer(segments: ReadonlyArray<string | number>): string {
  return segments.map((s) => `/${String(s).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

/**
 * Builds cumulative RFC 6902 patches against a plan: it keeps the plan as the
 * patches made so far leave it, so each patch adds missing parents itself and
 * is valid once the earlier ones are applied.
 */
export class PatchBuilder {
  private readonly doc: Record<string, unknown>;

  constructor(plan: unknown) {
    this.doc = structuredClone(plan) as Record<string, unknown>;
  }

  /** Ops that set `segments` to `value`, creating missing parent objects. */
  set(segments: string[], value: unknown): PatchOp[] {
    const ops: PatchOp[] = [];
    let at: Record<string, unknown> = this.doc;
    for (let i = 0; i < segments.length - 1; i++) {
      const s = segments[i]!;
      if (typeof at[s] !== 'object' || at[s] === null) {
        at[s] = {};
        ops.push({ op: 'add', path: pointer(segments.slice(0, i + 1)), value: {} });
      }
      at = at[s] as Record<string, unknown>;
    }
    const last = segments.at(-1)!;
    if (at[last] === value) return ops;
    at[last] = structuredClone(value);
    ops.push({ op: 'add', path: pointer(segments), value });
    return ops;
  }

  /** Ops that append `value` to the array at `segments`, creating it (and its parents) if missing. */
  append(segments: string[], value: unknown): PatchOp[] {
    const parent = segments.slice(0, -1);
    const ops: PatchOp[] = [];
    let at: Record<string, unknown> = this.doc;
    for (let i = 0; i < parent.length; i++) {
      const s = parent[i]!;
      if (typeof at[s] !== 'object' || at[s] === null) {
        at[s] = {};
        ops.push({ op: 'add', path: pointer(parent.slice(0, i + 1)), value: {} });
      }
      at = at[s] as Record<string, unknown>;
    }
    const last = segments.at(-1)!;
    if (!Array.isArray(at[last])) {
      at[last] = [structuredClone(value)];
      ops.push({ op: 'add', path: pointer(segments), value: [value] });
    } else {
      (at[last] as unknown[]).push(structuredClone(value));
      ops.push({ op: 'add', path: `${pointer(segments)}/-`, value });
    }
    return ops;
  }
}

/**
 * Applies an RFC 6902 patch (add, replace, remove, test) to a JSON value;
 * returns the new value. Throws on a path that does not resolve, as the RFC
 * requires.
 */
export function applyPatch<T>(doc: T, patch: readonly PatchOp[]): T {
  let root: unknown = structuredClone(doc);
  for (const op of patch) {
    const parts =
      op.path === ''
        ? []
        : op.path
            .slice(1)
            .split('/')
            .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
    if (parts.length === 0) {
      if (op.op === 'test') {
        if (JSON.stringify(root) !== JSON.stringify(op.value)) throw new Error('patch test failed at the root');
      } else if (op.op === 'remove') root = undefined;
      else root = structuredClone(op.value);
      continue;
    }
    type Container = Record<string, unknown> | unknown[];
    let at: unknown = root;
    for (const p of parts.slice(0, -1)) {
      at = Array.isArray(at) ? at[Number(p)] : (at as Record<string, unknown> | undefined)?.[p];
      if (at === undefined || at === null || typeof at !== 'object') throw new Error(`patch path ${op.path}: ${p} does not exist`);
    }
    if (at === undefined || at === null || typeof at !== 'object') throw new Error(`patch path ${op.path}: the parent does not exist`);
    const parent = at as Container;
    const last = parts.at(-1)!;
    if (Array.isArray(parent)) {
      const index = last === '-' ? parent.length : Number(last);
      if (!Number.isInteger(index) || index < 0 || index > parent.length) throw new Error(`patch path ${op.path}: bad array index`);
      if (op.op === 'add') parent.splice(index, 0, structuredClone(op.value));
      else if (op.op === 'remove') parent.splice(index, 1);
      else if (op.op === 'replace') parent[index] = structuredClone(op.value);
      else if (JSON.stringify(parent[index]) !== JSON.stringify(op.value)) throw new Error(`patch test failed at ${op.path}`);
    } else {
      if (op.op !== 'add' && !(last in parent)) throw new Error(`patch path ${op.path} does not exist`);
      if (op.op === 'add' || op.op === 'replace') parent[last] = structuredClone(op.value);
      else if (op.op === 'remove') delete parent[last];
      else if (JSON.stringify(parent[last]) !== JSON.stringify(op.value)) throw new Error(`patch test failed at ${op.path}`);
    }
  }
  return root as T;
}
