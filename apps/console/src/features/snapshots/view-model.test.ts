import { describe, expect, it } from 'vitest';
import { snapshot, view } from '../../test/fixtures.ts';
import { buildSaved, readSaved, savedFileName, savedViews } from './view-model.ts';

describe('saved snapshots', () => {
  it('round-trips the nodes’ snapshots, leaving out nodes without one', () => {
    const saved = buildSaved(
      [view('a', snapshot('a')), view('b', undefined, { kind: 'unreachable', stale: false })],
      Date.parse('2026-01-02T03:04:05.678Z'),
    );
    expect(saved.nodes.map((n) => n.id)).toEqual(['a']);
    const back = readSaved(JSON.stringify(saved));
    expect(back.ok && savedViews(back.value)[0]).toMatchObject({
      node: { id: 'a' },
      status: { kind: 'ok', stale: false },
      top: { node: { name: 'a' } },
    });
    expect(savedFileName(saved.saved_at)).toBe('parley-snapshots-20260102T030405Z.json');
  });

  it('opens a single raw /top/v1/snapshot answer too', () => {
    const r = readSaved(JSON.stringify(snapshot('solo')));
    expect(r.ok && r.value.nodes[0]?.name).toBe('solo');
  });

  it('refuses anything else with the first schema error', () => {
    expect(readSaved('{')).toEqual({ ok: false, error: 'not JSON' });
    const r = readSaved(
      JSON.stringify({
        format: 'parley-console-snapshots/v1',
        saved_at: 'x',
        nodes: [{ id: 'a', url: '', snapshot: { version: 'top/v0' } }],
      }),
    );
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(/^\/nodes\/0\/snapshot/);
  });
});
