/**
 * A blocker's `resolution` as the wizard applies it. parleyctl's patches are
 * cumulative (each assumes the ones listed before it were applied), but an
 * operator accepts cards one by one, in any order; so the wizard applies a
 * patch as the plan change it means: members are set, parents created, list
 * entries appended once and objects merged, never replaced wholesale.
 */

export interface PatchOp {
  op: 'add' | 'replace' | 'remove' | 'test' | 'move' | 'copy';
  path: string;
  value?: unknown;
}

/** One change a card shows: a member set to a value, or an entry added to a list. */
export type Change =
  { kind: 'set'; path: string; value: unknown } | { kind: 'entry'; path: string; entry: unknown } | { kind: 'remove'; path: string };

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

export function segments(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** Same JSON value (object key order ignored). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  if (isObj(a) && isObj(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && sameJson(a[k], b[k]));
  }
  return false;
}

function mergeInto(target: unknown, value: unknown): unknown {
  if (Array.isArray(target) && Array.isArray(value)) {
    const out = [...target];
    for (const v of value) if (!out.some((x) => sameJson(x, v))) out.push(structuredClone(v));
    return out;
  }
  if (isObj(target) && isObj(value)) {
    const out: Obj = { ...target };
    for (const [k, v] of Object.entries(value)) out[k] = k in out ? mergeInto(out[k], v) : structuredClone(v);
    return out;
  }
  return structuredClone(value);
}

/** Applies `patch` to a copy of `plan` as plan changes (see above); `test`, `move` and `copy` are not resolutions and are ignored. */
export function applyResolution(plan: unknown, patch: readonly PatchOp[]): unknown {
  const doc = structuredClone(plan) as Obj;
  for (const op of patch) {
    const segs = segments(op.path);
    if (segs.length === 0 || (op.op !== 'add' && op.op !== 'replace' && op.op !== 'remove')) continue;
    let at: unknown = doc;
    for (const [i, s] of segs.slice(0, -1).entries()) {
      if (Array.isArray(at)) {
        at = at[Number(s)];
        continue;
      }
      if (!isObj(at)) break;
      if (!isObj(at[s]) && !Array.isArray(at[s])) {
        if (op.op === 'remove') break;
        at[s] = segs[i + 1] === '-' || /^\d+$/.test(segs[i + 1]!) ? [] : {};
      }
      at = at[s];
    }
    const last = segs.at(-1)!;
    if (Array.isArray(at)) {
      if (op.op === 'remove') at.splice(Number(last), 1);
      else if (last === '-') {
        if (!at.some((x) => sameJson(x, op.value))) at.push(structuredClone(op.value));
      } else if (op.op === 'replace') at[Number(last)] = structuredClone(op.value);
      else if (!at.some((x) => sameJson(x, op.value))) at.splice(Number(last), 0, structuredClone(op.value));
    } else if (isObj(at)) {
      if (op.op === 'remove') delete at[last];
      else if (op.op === 'replace' || !(last in at)) at[last] = structuredClone(op.value);
      else at[last] = mergeInto(at[last], op.value);
    }
  }
  return doc;
}

/** The plan changes of a patch, without the empty parents it creates on the way. */
export function describeChanges(patch: readonly PatchOp[]): Change[] {
  const out: Change[] = [];
  for (const op of patch) {
    const segs = segments(op.path);
    const dotted = segs.filter((s) => s !== '-').join('.');
    if (op.op === 'remove') out.push({ kind: 'remove', path: dotted });
    else if (op.op !== 'add' && op.op !== 'replace') continue;
    else if (segs.at(-1) === '-') out.push({ kind: 'entry', path: dotted, entry: op.value });
    else if (Array.isArray(op.value)) for (const e of op.value) out.push({ kind: 'entry', path: dotted, entry: e });
    else if (isObj(op.value) && Object.keys(op.value).length === 0) continue;
    else out.push({ kind: 'set', path: dotted, value: op.value });
  }
  return out;
}

/** Whether the plan already holds everything the patch adds. */
export function alreadyApplied(plan: unknown, patch: readonly PatchOp[]): boolean {
  return patch.length > 0 && sameJson(applyResolution(plan, patch), plan);
}

export interface DiffLine {
  kind: 'same' | 'add' | 'del';
  text: string;
}

/**
 * A line diff of two plans as pretty JSON (what plan.json will hold). The
 * common head and tail are cut first, so the quadratic part only sees the
 * lines that changed.
 */
export function planDiff(before: unknown, after: unknown): DiffLine[] {
  const a = JSON.stringify(before, null, 2).split('\n');
  const b = JSON.stringify(after, null, 2).split('\n');
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const x = a.slice(head, a.length - tail);
  const y = b.slice(head, b.length - tail);
  const n = x.length;
  const m = y.length;
  const lcs = Array.from({ length: n + 1 }, () => new Int32Array(m + 1));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--) lcs[i]![j] = x[i] === y[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const mid: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && x[i] === y[j]) {
      mid.push({ kind: 'same', text: x[i]! });
      i++;
      j++;
    } else if (j < m && (i >= n || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) mid.push({ kind: 'add', text: y[j++]! });
    else mid.push({ kind: 'del', text: x[i++]! });
  }
  return [
    ...a.slice(0, head).map((text) => ({ kind: 'same' as const, text })),
    ...mid,
    ...a.slice(a.length - tail).map((text) => ({ kind: 'same' as const, text })),
  ];
}

/** Keeps `context` unchanged lines around each change; longer unchanged runs become one `…` line. */
export function foldDiff(lines: readonly DiffLine[], context = 3): Array<DiffLine | { kind: 'fold'; count: number }> {
  const near = lines.map((_, i) => lines.slice(Math.max(0, i - context), i + context + 1).some((l) => l.kind !== 'same'));
  const out: Array<DiffLine | { kind: 'fold'; count: number }> = [];
  for (const [i, l] of lines.entries()) {
    if (near[i]) out.push(l);
    else {
      const prev = out.at(-1);
      if (prev && prev.kind === 'fold') prev.count++;
      else out.push({ kind: 'fold', count: 1 });
    }
  }
  return out;
}
