import type { Plan } from '@parley/shared';

/**
 * The seed's verification rules across the reports of one plan: the console
 * reads what the stages wrote and compares; it decides nothing a stage
 * decides. Each check is passed, failed, or pending (a report it needs is
 * not there yet), with the values it compared.
 */

export type CheckState = 'pass' | 'fail' | 'pending';

export interface CrossCheck {
  id:
    | 'plan_digest'
    | 'selection_digest'
    | 'node_count'
    | 'message_replicas'
    | 'retained_messages'
    | 'record_counts'
    | 'verify_clean'
    | 'side_effects'
    | 'sequence_mapping';
  state: CheckState;
  /** What was compared, one line per value (identifiers and numbers, never translated). */
  values: string[];
}

type R = Record<string, unknown> | undefined;
type FileEntry = { sha256?: string; count?: number };

export interface StageReports {
  prepare?: R;
  export?: R;
  import?: R;
  verify?: R;
  'export-map'?: R;
}

const num = (r: R, k: string): number | undefined => (typeof r?.[k] === 'number' ? (r[k] as number) : undefined);
const str = (r: R, k: string): string | undefined => (typeof r?.[k] === 'string' ? (r[k] as string) : undefined);

function agree(named: Array<[string, unknown]>, need: string[]): { state: CheckState; values: string[] } {
  const present = named.filter(([, v]) => v !== undefined);
  const values = present.map(([n, v]) => `${n}: ${String(v)}`);
  if (present.some(([, v]) => v !== present[0]![1])) return { state: 'fail', values };
  const have = new Set(present.map(([n]) => n));
  return { state: need.every((n) => have.has(n)) ? 'pass' : 'pending', values };
}

export function crossChecks(plan: Plan, planSha256: string, reports: StageReports): CrossCheck[] {
  const { prepare, verify } = reports;
  const exp = reports.export;
  const imp = reports.import;
  const map = reports['export-map'];
  const out: CrossCheck[] = [];

  const digests: Array<[string, unknown]> = [
    ['plan', planSha256],
    ...(['prepare', 'export', 'import', 'verify', 'export-map'] as const).map((s): [string, unknown] => [
      s,
      str(reports[s], 'plan_sha256'),
    ]),
  ];
  out.push({ id: 'plan_digest', ...agree(digests, ['plan', 'verify']) });

  out.push({
    id: 'selection_digest',
    ...agree(
      (['prepare', 'export', 'import', 'verify'] as const).map((s) => [s, str(reports[s], 'selection_digest')]),
      ['prepare', 'verify'],
    ),
  });

  const targets = Array.isArray(imp?.targets) ? (imp.targets as unknown[]).length : undefined;
  out.push({
    id: 'node_count',
    ...agree(
      [
        ['plan', plan.target.nodes.length],
        ['import targets', targets],
        ['verify node_count', num(verify, 'node_count')],
      ],
      ['plan', 'verify node_count'],
    ),
  });

  const retained = num(prepare, 'retained_messages');
  const want = retained === undefined ? undefined : retained * plan.target.channel_replicas;
  const got = num(verify, 'verified_message_replicas');
  out.push({
    id: 'message_replicas',
    state: want === undefined || got === undefined ? 'pending' : want === got ? 'pass' : 'fail',
    values: [
      `prepare retained_messages × channel_replicas: ${retained ?? '?'} × ${plan.target.channel_replicas} = ${want ?? '?'}`,
      `verify verified_message_replicas: ${got ?? '?'}`,
    ],
  });

  out.push({
    id: 'retained_messages',
    ...agree(
      (['prepare', 'export', 'import', 'verify'] as const).map((s) => [s, num(reports[s], 'retained_messages')]),
      ['prepare', 'export', 'import', 'verify'],
    ),
  });

  const outFiles = (prepare?.out ?? undefined) as Record<string, FileEntry> | undefined;
  const archived = (exp?.files ?? undefined) as Record<string, FileEntry> | undefined;
  if (!outFiles || !archived) out.push({ id: 'record_counts', state: 'pending', values: [] });
  else {
    const values: string[] = [];
    let bad = false;
    for (const [name, f] of Object.entries(outFiles)) {
      const a = archived[name];
      const same = a !== undefined && a.count === f.count && a.sha256 === f.sha256;
      bad ||= !same;
      values.push(`${name}: prepare ${f.count ?? '?'} → archive ${a?.count ?? 'missing'}${same ? '' : ' ≠'}`);
    }
    out.push({ id: 'record_counts', state: bad ? 'fail' : 'pass', values });
  }

  if (!verify) out.push({ id: 'verify_clean', state: 'pending', values: [] });
  else {
    const mismatches = Array.isArray(verify.mismatches) ? verify.mismatches.length : undefined;
    const ok = verify.status === 'offline_verified' && mismatches === 0 && verify.cutover_ready === false;
    out.push({
      id: 'verify_clean',
      state: ok ? 'pass' : 'fail',
      values: [`status: ${String(verify.status)}`, `mismatches: ${mismatches ?? '?'}`, `cutover_ready: ${String(verify.cutover_ready)}`],
    });
  }

  const hidden = agree(
    [
      ['prepare', num(prepare, 'hidden_memberships')],
      ['import', num(imp, 'hidden_memberships')],
    ],
    ['prepare', 'import'],
  );
  const unread = agree(
    [
      ['prepare', num(prepare, 'archived_unread')],
      ['import', num(imp, 'archived_unread')],
    ],
    ['prepare', 'import'],
  );
  const states = [hidden.state, unread.state];
  out.push({
    id: 'side_effects',
    state: states.includes('fail') ? 'fail' : states.includes('pending') ? 'pending' : 'pass',
    values: [...hidden.values.map((v) => `hidden_memberships ${v}`), ...unread.values.map((v) => `archived_unread ${v}`)],
  });

  if (plan.messages?.compact_sequences) {
    const mapped = (prepare?.sequence_mapping as Record<string, FileEntry> | undefined)?.mapping;
    const rebuilt = (map?.sequence_mapping as Record<string, FileEntry> | undefined)?.mapping;
    const values = [`prepare mapping: ${mapped?.sha256 ?? '?'} (${mapped?.count ?? '?'} rows)`];
    if (map) values.push(`export-map: ${rebuilt?.sha256 ?? '?'}, matches_archive ${String(map.matches_archive)}`);
    const state: CheckState = !mapped
      ? prepare
        ? 'fail'
        : 'pending'
      : !map
        ? 'pending'
        : map.matches_archive === true && rebuilt?.sha256 === mapped.sha256
          ? 'pass'
          : 'fail';
    out.push({ id: 'sequence_mapping', state, values });
  }
  return out;
}

/** All checks passed (none pending, none failed). */
export function allPassed(checks: readonly CrossCheck[]): boolean {
  return checks.every((c) => c.state === 'pass');
}
