import { describe, expect, it } from 'vitest';
import type { Plan, RunRecord } from '@parley/shared';
import { getAt, setAt, startupConfig } from './plan-form.ts';
import { currentReport, gate, stageState } from './stages.ts';

const run = (stage: RunRecord['stage'], state: RunRecord['state'], extra: Partial<RunRecord> = {}): RunRecord => ({
  id: `${stage}-${state}-${Math.random()}`,
  plan_id: 'plan-1',
  stage,
  workspace: '/r/plan-1/ws',
  argv: [],
  state,
  started_at: '2026-05-01T00:00:00Z',
  line_count: 0,
  ...extra,
});
const plan = { target: { nodes: [] }, messages: {} } as unknown as Plan;

describe('stage states and gates', () => {
  it('unlocks a stage only after the one before it succeeded, one stage at a time', () => {
    expect(gate({ runs: [], plan }, 'prepare')).toEqual({ open: true });
    expect(gate({ runs: [], plan }, 'export')).toEqual({ open: false, why: 'needs', stage: 'prepare' });
    expect(gate({ runs: [run('prepare', 'failed')], plan }, 'export')).toMatchObject({ open: false, why: 'needs' });
    expect(gate({ runs: [run('prepare', 'succeeded')], plan }, 'export')).toEqual({ open: true });
    expect(gate({ runs: [run('prepare', 'succeeded'), run('export', 'running')], plan }, 'diagnose')).toMatchObject({
      open: false,
      why: 'running',
      stage: 'export',
    });
    expect(gate({ runs: [run('export', 'succeeded')], plan }, 'export-map')).toEqual({ open: false, why: 'not_compact' });
    expect(gate({ runs: [run('export', 'succeeded')], plan: { ...plan, messages: { compact_sequences: true } } }, 'export-map')).toEqual({
      open: true,
    });
  });

  it('tells a blocked run (exit 1 with blockers) from a failed one, and shows the last good report', () => {
    expect(stageState([run('diagnose', 'failed', { report_status: 'blocked' })], 'diagnose')).toBe('blocked');
    expect(stageState([run('diagnose', 'failed', { report_status: 'incomplete' })], 'diagnose')).toBe('blocked');
    expect(stageState([run('import', 'failed', { report_status: 'failed' })], 'import')).toBe('failed');
    expect(stageState([run('import', 'cancelled')], 'import')).toBe('cancelled');
    expect(stageState([], 'verify')).toBe('todo');
    const good = run('prepare', 'succeeded', { report_file: 'a.json' });
    expect(currentReport([good, run('prepare', 'failed', { report_file: 'b.json' })], 'prepare')).toBe(good);
  });
});

describe('the plan form’s document', () => {
  it('reads and writes members by JSON Pointer, making parents and removing list rows', () => {
    let doc: unknown = { sources: [{ node_id: 1 }] };
    doc = setAt(doc, '/target/nodes/0/addr', '10.0.0.1:1');
    expect(getAt(doc, '/target/nodes/0/addr')).toBe('10.0.0.1:1');
    expect(Array.isArray(getAt(doc, '/target/nodes'))).toBe(true);
    doc = setAt(doc, '/sources/1', { node_id: 2 });
    doc = setAt(doc, '/sources/0', undefined);
    expect(getAt(doc, '/sources')).toEqual([{ node_id: 2 }]);
    doc = setAt(doc, '/messages/exclude_cmd', true);
    doc = setAt(doc, '/messages/exclude_cmd', undefined);
    expect(getAt(doc, '/messages')).toEqual({});
  });

  it('derives each target node’s startup settings in Parley’s TOML', () => {
    const p = {
      target: {
        cluster_id: 'prod',
        slot_count: 12,
        hash_slot_count: 256,
        replicas: 1,
        channel_replicas: 1,
        nodes: [{ node_id: 7, addr: 'a:1', data_dir: '/t/7' }],
      },
    };
    expect(startupConfig(p, 0)).toContain(
      '[node]\nid = 7\ndata_dir = "/t/7"\n\n[cluster]\nid = "prod"\ninitial_slot_count = 12\nhash_slot_count = 256\nslot_replica_n = 1\nchannel_replica_n = 1',
    );
  });
});
