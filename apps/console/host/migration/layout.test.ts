import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { nextName, normalAbsolute, openRoot, planDirectory, Refused, stageDir } from './layout.ts';
import { parseProgress } from './runner.ts';
import { onePlan } from '../../test/migration-fixtures.ts';

const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'parley-layout-')));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const refused = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    if (err instanceof Refused) return err.code;
    throw err;
  }
  return undefined;
};

describe('migration root and stage paths', () => {
  it('takes only absolute, normal paths', () => {
    expect(normalAbsolute('/a/b')).toBe('/a/b');
    for (const p of ['a/b', '/a/../b', '/a/./b', '/a//b', '/a/b/', '/a/\0b']) expect(normalAbsolute(p), p).toBeUndefined();
  });

  it('opens an empty or new folder as a root (writing its identity), refuses a folder of other files', () => {
    const fresh = join(tmp, 'fresh');
    expect(openRoot(fresh)).toBe(fresh);
    expect(openRoot(fresh)).toBe(fresh);
    const busy = join(tmp, 'busy');
    mkdirSync(busy);
    writeFileSync(join(busy, 'notes.txt'), 'x');
    expect(refused(() => openRoot(busy))).toBe('exists');
    expect(refused(() => openRoot('/'))).toBe('invalid_request');
    expect(refused(() => openRoot(join(tmp, 'no', 'parent')))).toBe('not_found');
  });

  it('puts stage folders directly in the plan’s folder, plainly named and never through a symlink', () => {
    const plan = join(tmp, 'plan-1');
    mkdirSync(plan);
    expect(stageDir(plan, join(plan, 'ws-prepare'), 'w')).toBe(join(plan, 'ws-prepare'));
    mkdirSync(join(tmp, 'out'));
    symlinkSync(join(tmp, 'out'), join(plan, 'ws-link'));
    for (const p of [
      join(plan, 'ws-link'),
      join(plan, 'reports'),
      join(plan, 'plan.json'),
      join(plan, '.hidden'),
      join(plan, 'a', 'b'),
      tmp,
    ]) {
      expect(
        refused(() => stageDir(plan, p, 'w')),
        p,
      ).toBe('path_not_allowed');
    }
  });

  it('lets probes read only the plan’s own source and target directories', () => {
    const plan = onePlan(tmp, join(tmp, 'src'));
    expect(planDirectory(plan, join(tmp, 'src'))).toBe(join(tmp, 'src'));
    expect(planDirectory(plan, `${join(tmp, 'src')}/`)).toBe(join(tmp, 'src'));
    expect(refused(() => planDirectory(plan, join(tmp, 'src', 'db')))).toBe('path_not_allowed');
    expect(refused(() => planDirectory(plan, `${tmp}/x/../src`))).toBe('path_not_allowed');
  });

  it('proposes the next unused folder name', () => {
    const d = join(tmp, 'names');
    mkdirSync(d);
    expect(nextName(d, 'archive', true)).toBe(join(d, 'archive'));
    mkdirSync(join(d, 'archive'));
    expect(nextName(d, 'archive', true)).toBe(join(d, 'archive-2'));
    expect(nextName(d, 'ws-import', false)).toBe(join(d, 'ws-import-1'));
  });
});

describe('progress lines', () => {
  it('reads n/m from the stage’s stderr lines, and nothing from paths', () => {
    expect(parseProgress('parleyctl: prepare: node 1 shard 3/8: 1371 keys read; 132 messages so far (4400/s)')).toEqual({
      done: 3,
      total: 8,
    });
    expect(parseProgress('parleyctl: export: records/users.jsonl 20 records')).toBeUndefined();
    expect(parseProgress('parleyctl: import: node 7 → /tmp/plan-1/2/3')).toBeUndefined();
    expect(parseProgress('parleyctl: x 9/8')).toBeUndefined();
  });
});
