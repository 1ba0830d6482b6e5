import { describe, expect, it } from 'vitest';
import { checkPlan, planIssues } from './plan.ts';

const plan = () => ({
  version: 1,
  sources: [{ node_id: 1, data_dir: '/m/src', shard_count: 8 }],
  target: {
    cluster_id: 'c',
    created_at: '2026-05-01T00:00:00Z',
    slot_count: 12,
    hash_slot_count: 256,
    replicas: 1,
    channel_replicas: 1,
    nodes: [{ node_id: 7, addr: '10.0.0.1:11110', data_dir: '/m/targets/n7' }],
  },
});

describe('planIssues: every problem with the JSON Pointer of its member (for an editor) and parleyctl’s text', () => {
  it('marks schema problems, unknown members and cross rules at their member', () => {
    const p: any = plan();
    p.target.nodes[0].addr = 'no-port';
    p.messages = { keep_latest: true };
    p.target.replicas = 2;
    p.sources.push({ node_id: 1, data_dir: '/m/src/inner', shard_count: 8 });
    const issues = planIssues(p);
    const at = (ptr: string) => issues.filter((i) => i.pointer === ptr).map((i) => i.message);
    expect(at('/target/nodes/0/addr')).toHaveLength(1);
    expect(at('/messages')).toEqual(['unknown member "keep_latest" (not supported by this release)']);
    expect(at('/target/replicas')).toEqual(['2 exceeds the target node count 1']);
    expect(at('/sources/1/node_id')).toEqual(['duplicate value 1']);
    expect(at('/sources/1/data_dir')).toEqual(['plan.sources[0].data_dir (/m/src) contains plan.sources[1].data_dir (/m/src/inner)']);
  });

  it('keeps checkPlan’s one-line texts', () => {
    const p: any = plan();
    p.target.channel_replicas = 3;
    p.target.nodes.push({ node_id: 7, addr: '10.0.0.1:11110', data_dir: '/m/targets/n7' });
    expect(checkPlan(p).problems).toEqual([
      'plan.target.channel_replicas: 3 exceeds the target node count 2',
      'plan.target.nodes[].node_id: duplicate value 7',
      'plan.target.nodes[].addr: duplicate value "10.0.0.1:11110"',
      'plan.target.nodes[0].data_dir and plan.target.nodes[1].data_dir: the same directory /m/targets/n7',
    ]);
    expect(checkPlan(plan(), { workspace: '/m/src/ws' }).problems).toEqual([
      'plan.sources[0].data_dir (/m/src) contains --workspace (/m/src/ws)',
    ]);
    expect(checkPlan(plan())).toEqual({ plan: plan(), problems: [] });
  });
});

describe('planIssues hints: what a member needs, for an editor to word it', () => {
  it('names the kind of value for the common schema problems', () => {
    const p: any = plan();
    p.sources[0].data_dir = 'relative';
    p.target.nodes[0].addr = 'no-port';
    p.target.cluster_id = '';
    p.target.created_at = 'yesterday';
    p.target.nodes[0].node_id = 2000;
    p.target.slot_count = 0;
    delete p.sources[0].shard_count;
    const hint = (ptr: string) => planIssues(p).find((i) => i.pointer === ptr && i.hint)?.hint;
    expect(hint('/sources/0/data_dir')).toBe('absolute_path');
    expect(hint('/target/nodes/0/addr')).toBe('host_port');
    expect(hint('/target/cluster_id')).toBe('required');
    expect(hint('/target/created_at')).toBe('iso8601');
    expect(hint('/target/nodes/0/node_id')).toBe('at_most');
    expect(hint('/target/slot_count')).toBe('at_least');
    expect(hint('/sources/0/shard_count')).toBe('required');
    // an empty or relative path is a schema problem only, never "contains" another
    p.sources[0].data_dir = '';
    expect(planIssues(p).filter((i) => i.message.includes('contains'))).toEqual([]);
  });
});
