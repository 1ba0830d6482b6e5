import { describe, expect, it } from 'vitest';
import { item, snapshot, view } from '../../test/fixtures.ts';
import { componentScores, limitFraction, pressureRows } from './view-model.ts';

describe('pressure page', () => {
  const a = snapshot('a', {
    items: [
      item('storage', 'append', 0.82, 'degraded', { depth: 3358, capacity: 4096 }),
      item('runtime', 'event_loop', 0.1, 'ok', { inflight: 0.1, workers: 1 }),
    ],
  });
  const b = snapshot('b', {
    items: [
      item('storage', 'append', 0.6, 'busy', { depth: 60, capacity: 100 }),
      item('gateway', 'outbound', 0, 'ok', { depth: 0, capacity: 0 }),
    ],
  });
  const views = [view('a', a), view('b', b)];

  it('draws limits as fractions: a zero limit with a value is full', () => {
    expect(limitFraction(50, 100)).toBe(0.5);
    expect(limitFraction(150, 100)).toBe(1);
    expect(limitFraction(3, 0)).toBe(1);
    expect(limitFraction(0, 0)).toBe(0);
    expect(limitFraction(undefined, undefined)).toBeUndefined();
  });

  it('bands every item on 0.6 / 0.8 / 0.95 and keeps only busy or worse on request', () => {
    const all = pressureRows(views, { onlyPressured: false, sort: 'score' });
    expect(all.map((r) => [r.nodeName, r.label, r.band])).toEqual([
      ['a', 'storage/append', 'degraded'],
      ['b', 'storage/append', 'busy'],
      ['a', 'runtime/event_loop', 'ok'],
      ['b', 'gateway/outbound', 'ok'],
    ]);
    expect(all[0]!.depthFraction).toBeCloseTo(3358 / 4096);
    expect(all[2]!.inflightFraction).toBeCloseTo(0.1);
    expect(all[2]!.depthFraction).toBeUndefined();
    expect(pressureRows(views, { onlyPressured: true, sort: 'score' }).map((r) => r.band)).toEqual(['degraded', 'busy']);
    expect(pressureRows(views, { onlyPressured: false, sort: 'component' }).map((r) => r.label)[0]).toBe('gateway/outbound');
  });

  it('gives each component its worst score across nodes', () => {
    expect(componentScores(views).map((c) => [c.component, c.score, c.band, c.nodeName])).toEqual([
      ['storage', 0.82, 'degraded', 'a'],
      ['runtime', 0.1, 'ok', 'a'],
      ['gateway', 0, 'ok', 'b'],
    ]);
  });
});
