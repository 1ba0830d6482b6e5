import { describe, expect, it } from 'vitest';
import type { Plan } from '@parley/shared';
import { allPassed, crossChecks, type StageReports } from './cross-checks.ts';

const plan = (compact = false): Plan => ({
  version: 1,
  sources: [{ node_id: 1, data_dir: '/m/src', shard_count: 8 }],
  target: {
    cluster_id: 'c',
    created_at: '2026-05-01T00:00:00Z',
    slot_count: 12,
    hash_slot_count: 256,
    replicas: 1,
    channel_replicas: 1,
    nodes: [{ node_id: 7, addr: '10.0.0.1:11110', data_dir: '/m/t' }],
  },
  ...(compact ? { messages: { compact_sequences: true } } : {}),
});
const P = 'p'.repeat(64);
const S = 's'.repeat(64);
const files = { credentials: { sha256: 'c1', count: 30 }, messages: { sha256: 'm1', count: 435 } };
const mapping = { mapping: { sha256: 'mm', count: 480 } };

function reports(): StageReports {
  return {
    prepare: {
      plan_sha256: P,
      selection_digest: S,
      retained_messages: 435,
      out: files,
      hidden_memberships: 1,
      archived_unread: 0,
      sequence_mapping: mapping,
    },
    export: { plan_sha256: P, selection_digest: S, retained_messages: 435, files },
    import: { plan_sha256: P, selection_digest: S, retained_messages: 435, targets: [{}], hidden_memberships: 1, archived_unread: 0 },
    verify: {
      plan_sha256: P,
      selection_digest: S,
      retained_messages: 435,
      node_count: 1,
      verified_message_replicas: 435,
      status: 'offline_verified',
      mismatches: [],
      cutover_ready: false,
    },
  };
}
const state = (r: StageReports, p = plan()) => Object.fromEntries(crossChecks(p, P, r).map((c) => [c.id, c.state]));

describe('cross-report checks (seed 001, verification)', () => {
  it('pass when every report agrees, and each is pending until the reports it needs exist', () => {
    expect(allPassed(crossChecks(plan(), P, reports()))).toBe(true);
    const early = state({ prepare: reports().prepare });
    expect(early).toMatchObject({
      selection_digest: 'pending',
      message_replicas: 'pending',
      record_counts: 'pending',
      verify_clean: 'pending',
    });
    expect(Object.values(early)).not.toContain('fail');
  });

  it('fail on a different selection digest, node count, replica product, record count or plan digest', () => {
    const cases: Array<[string, (r: any) => void]> = [
      ['selection_digest', (r) => (r.import.selection_digest = 'x')],
      ['node_count', (r) => (r.verify.node_count = 2)],
      ['message_replicas', (r) => (r.verify.verified_message_replicas = 434)],
      ['record_counts', (r) => (r.export.files = { ...files, messages: { sha256: 'm1', count: 434 } })],
      ['plan_digest', (r) => (r.export.plan_sha256 = 'other')],
      ['verify_clean', (r) => (r.verify.mismatches = [{ field: 'x' }])],
      ['side_effects', (r) => (r.import.archived_unread = 3)],
    ];
    for (const [id, change] of cases) {
      const r = reports();
      change(r);
      expect(state(r)[id], id).toBe('fail');
    }
  });

  it('with compact_sequences, asks for the rebuilt mapping of export-map to match prepare’s', () => {
    expect(state(reports(), plan(true)).sequence_mapping).toBe('pending');
    const r = { ...reports(), 'export-map': { plan_sha256: P, matches_archive: true, sequence_mapping: mapping } };
    expect(state(r, plan(true)).sequence_mapping).toBe('pass');
    expect(state({ ...r, 'export-map': { ...r['export-map'], matches_archive: false } }, plan(true)).sequence_mapping).toBe('fail');
    expect(state(reports()).sequence_mapping).toBeUndefined();
  });
});
