import { describe, expect, it } from 'vitest';
import { TopSnapshot } from '@parley/shared';
import { nodeStatus } from './node-status.ts';
import { OpsFailure, readReply } from './ops.ts';
import { snapshot } from '../test/fixtures.ts';

const reply = (status: number, body: unknown) => ({
  ok: true as const,
  value: { status, content_type: 'application/json', body: typeof body === 'string' ? body : JSON.stringify(body) },
});
const failure = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return err as OpsFailure;
  }
  throw new Error('no failure');
};

describe('stale detection', () => {
  const now = 100_000;
  it('is loading before any answer, ok with fresh data', () => {
    expect(nodeStatus({ dataUpdatedAt: 0 }, now, 2000)).toEqual({ kind: 'loading', stale: false });
    expect(nodeStatus({ data: {}, dataUpdatedAt: now - 1000 }, now, 2000)).toEqual({ kind: 'ok', stale: false, ageMs: 1000 });
  });

  it('marks data stale after 3 intervals without a success, never when refresh is off', () => {
    expect(nodeStatus({ data: {}, dataUpdatedAt: now - 6000 }, now, 2000).stale).toBe(false);
    expect(nodeStatus({ data: {}, dataUpdatedAt: now - 6001 }, now, 2000)).toEqual({ kind: 'ok', stale: true, ageMs: 6001 });
    expect(nodeStatus({ data: {}, dataUpdatedAt: now - 600_000 }, now, 0).stale).toBe(false);
  });

  it('keeps the last data after a failure, marked stale with its age', () => {
    const s = nodeStatus(
      { data: {}, dataUpdatedAt: now - 1500, error: new OpsFailure('unreachable', 'the node cannot be reached') },
      now,
      2000,
    );
    expect(s).toEqual({ kind: 'unreachable', stale: true, ageMs: 1500, detail: 'the node cannot be reached' });
    expect(nodeStatus({ dataUpdatedAt: 0, error: new OpsFailure('warming_up', 'top collector warming up') }, now, 2000)).toMatchObject({
      kind: 'warming_up',
      stale: false,
    });
  });
});

describe('ops error mapping', () => {
  it('maps host failures and node statuses to the console states', () => {
    expect(failure(() => readReply('top', { ok: false, error: { code: 'unreachable', error: 'x' } }, TopSnapshot)).kind).toBe(
      'unreachable',
    );
    expect(failure(() => readReply('top', { ok: false, error: { code: 'timeout', error: 'x' } }, TopSnapshot)).kind).toBe('timeout');
    expect(failure(() => readReply('top', { ok: false, error: { code: 'session_expired', error: 'x' } }, TopSnapshot)).kind).toBe(
      'session_expired',
    );
    expect(failure(() => readReply('top', { ok: false, error: { code: 'unknown_node', error: 'x' } }, TopSnapshot)).kind).toBe('refused');
    expect(failure(() => readReply('top', reply(404, { error: 'top snapshot provider is not configured' }), TopSnapshot))).toMatchObject({
      kind: 'disabled',
      detail: 'top snapshot provider is not configured',
    });
    expect(failure(() => readReply('top', reply(503, { error: 'top collector warming up' }), TopSnapshot)).kind).toBe('warming_up');
    expect(failure(() => readReply('top', reply(400, { error: 'invalid view' }), TopSnapshot))).toMatchObject({
      kind: 'bad_query',
      detail: 'invalid view',
    });
    expect(failure(() => readReply('debug', reply(401, { error: 'bench bearer token required' }), TopSnapshot)).kind).toBe('unauthorized');
    expect(failure(() => readReply('debug', reply(404, { error: 'not found' }), TopSnapshot)).kind).toBe('disabled');
    expect(failure(() => readReply('top', reply(500, { error: 'boom' }), TopSnapshot)).kind).toBe('server_error');
  });

  it('reads a not-ready /readyz (503) as data, not a failure', () => {
    const schema = TopSnapshot.properties.verdict;
    expect(readReply('readyz', reply(503, { level: 'x', summary: 'y' }), schema)).toEqual({ level: 'x', summary: 'y' });
  });

  it('names the first schema error of an unreadable answer', () => {
    const bad = { ...snapshot('n'), window_seconds: 'ten' };
    expect(failure(() => readReply('top', reply(200, bad), TopSnapshot))).toMatchObject({
      kind: 'bad_response',
      detail: expect.stringMatching(/^\/window_seconds: /),
    });
    expect(failure(() => readReply('top', reply(200, 'not json'), TopSnapshot))).toMatchObject({
      kind: 'bad_response',
      detail: 'the answer is not JSON',
    });
    expect(readReply('top', reply(200, snapshot('n')), TopSnapshot).node.name).toBe('n');
  });
});
