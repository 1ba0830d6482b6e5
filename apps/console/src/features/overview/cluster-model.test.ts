import { describe, expect, it } from 'vitest';
import type { DebugCluster } from '@parley/shared';
import { snapshot, view } from '../../test/fixtures.ts';
import { clusterSource, clusterSummary, goneMembers } from './cluster-model.ts';

const map: DebugCluster = {
  node_id: 1,
  state_revision: 17,
  cluster_id: 'prod',
  controller_leader: 1,
  slot_count: 4,
  hash_slot_count: 256,
  nodes: [
    { node_id: 3, name: 'node-3', api_addr: '10.0.0.3:5001', live: true, slots: [3] },
    { node_id: 1, name: 'node-1', api_addr: '127.0.0.1:5001', live: true, slots: [0, 1] },
  ],
  slots: [
    { slot_id: 0, leader_id: 1, replicas: [1] },
    { slot_id: 1, leader_id: 1, replicas: [1] },
    { slot_id: 2, leader_id: 0, replicas: [] },
    { slot_id: 3, leader_id: 3, replicas: [3] },
  ],
};

describe('cluster card model', () => {
  it('reads the map from the first current cluster node, none for single nodes', () => {
    const single = view('a', snapshot('a'));
    const member = view('b', { ...snapshot('b'), node: { ...snapshot('b').node, slot_count: 12, hash_slot_count: 256 } });
    expect(clusterSource([single])).toBeUndefined();
    expect(clusterSource([single, member])?.id).toBe('b');
    expect(clusterSource([{ ...member, status: { kind: 'ok', stale: true, ageMs: 9000 } }])).toBeUndefined();
  });

  it('lists every member by id, marks the ones this console polls, and counts slots without an owner', () => {
    const s = clusterSummary(map, [{ id: '127-0-0-1-5001', url: 'http://127.0.0.1:5001', has_token: false }]);
    expect(s).toMatchObject({ clusterId: 'prod', controllerLeader: 1, stateRevision: 17, slotCount: 4, hashSlotCount: 256, unowned: 1 });
    expect(s.members).toEqual([
      { id: 1, name: 'node-1', api: '127.0.0.1:5001', live: true, slots: [0, 1], consoleNodeId: '127-0-0-1-5001' },
      { id: 3, name: 'node-3', api: '10.0.0.3:5001', live: true, slots: [3] },
    ]);
  });
  it('names the members the cluster reports gone, by node id', () => {
    expect(goneMembers(map)).toEqual([]);
    const down: DebugCluster = {
      ...map,
      nodes: [
        { node_id: 5, name: '', api_addr: '', live: false, slots: [] },
        ...map.nodes!,
        { node_id: 2, name: 'node-2', api_addr: '10.0.0.2:5001', live: false, slots: [] },
      ],
    };
    expect(goneMembers(down)).toEqual(['node-2', 'node 5']);
  });
});
