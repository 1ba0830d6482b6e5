import { Badge, Card, Group, SimpleGrid, Stack, Text } from '@mantine/core';
import type { ReactNode } from 'react';
import type { MigrationStage } from '@parley/shared';
import { Raw, useI18n } from '../../i18n/i18n.tsx';
import type { MessageKey } from '../../i18n/messages.ts';

type R = Record<string, unknown>;

/** One number or identifier of a report, with the member it comes from (so it can be found in the raw JSON). */
function Fact({ label, member, v }: { label: MessageKey; member: string; v: unknown }) {
  const { t, f } = useI18n();
  if (v === undefined || v === null) return null;
  const text = typeof v === 'number' ? f.int(v) : typeof v === 'boolean' ? String(v) : String(v);
  return (
    <Stack gap={0} data-fact={member} style={{ minWidth: 0 }}>
      <Text size="xs" c="dimmed">
        {t(label)} · <Raw>{member}</Raw>
      </Text>
      <Text
        size="sm"
        fw={600}
        ff={typeof v === 'string' ? 'monospace' : undefined}
        className={typeof v === 'number' ? 'num' : undefined}
        style={{ wordBreak: 'break-all' }}
      >
        <Raw>{text}</Raw>
      </Text>
    </Stack>
  );
}

const count = (v: unknown) => (Array.isArray(v) ? v.length : v && typeof v === 'object' ? Object.keys(v).length : undefined);
const sum = (o: unknown) =>
  o && typeof o === 'object'
    ? Object.values(o as Record<string, number>).reduce((a, b) => a + (typeof b === 'number' ? b : 0), 0)
    : undefined;

/** The facts each stage's report is read for (console.md §2.6, report viewers). */
function facts(stage: MigrationStage, r: R): Array<[MessageKey, string, unknown]> {
  const common: Array<[MessageKey, string, unknown]> = [
    ['mig.fact.status', 'status', r.status],
    ['mig.fact.duration', 'duration_ms', r.duration_ms],
    ['mig.fact.tool', 'tool.version', (r.tool as R | undefined)?.version],
  ];
  const first: Array<[MessageKey, string, unknown]> = [
    ['mig.fact.selection', 'selection_digest', r.selection_digest],
    ['mig.fact.retained', 'retained_messages', r.retained_messages],
  ];
  switch (stage) {
    case 'diagnose':
    case 'prepare':
      return [
        ...common,
        ['mig.fact.blockers', 'blockers', count(r.blockers)],
        ['mig.fact.warnings', 'warning_totals', sum(r.warning_totals)],
        ...first,
        ['mig.fact.sources', 'sources', count(r.sources)],
        ['mig.fact.excluded', 'excluded', sum(r.excluded)],
        ['mig.fact.hidden', 'hidden_memberships', r.hidden_memberships],
        ['mig.fact.unread', 'archived_unread', r.archived_unread],
        ...(stage === 'diagnose'
          ? ([['mig.fact.complete', 'complete_scan', r.complete_scan]] as Array<[MessageKey, string, unknown]>)
          : []),
      ];
    case 'export':
      return [
        ...common,
        ...first,
        ['mig.fact.files', 'files', count(r.files)],
        ['mig.fact.complete', 'complete', r.complete],
        ['mig.fact.reused', 'reused', r.reused],
      ];
    case 'import':
      return [
        ...common,
        ...first,
        ['mig.fact.targets', 'targets', count(r.targets)],
        ['mig.fact.hidden', 'hidden_memberships', r.hidden_memberships],
        ['mig.fact.unread', 'archived_unread', r.archived_unread],
      ];
    case 'verify':
      return [
        ...common,
        ...first,
        ['mig.fact.nodes', 'node_count', r.node_count],
        ['mig.fact.replicas', 'verified_message_replicas', r.verified_message_replicas],
        ['mig.fact.mismatches', 'mismatches', count(r.mismatches)],
        ['mig.fact.cutover', 'cutover_ready', r.cutover_ready],
      ];
    case 'export-map':
      return [
        ...common,
        ['mig.fact.selection', 'selection_digest', r.selection_digest],
        ['mig.fact.matches', 'matches_archive', r.matches_archive],
      ];
  }
}

/** A stage report's status and key facts; `cutover_ready: false` after verify is labelled as the normal result it is. */
export function ReportSummary({ stage, report, link }: { stage: MigrationStage; report: R; link?: ReactNode }) {
  const { t } = useI18n();
  return (
    <Card withBorder padding="sm" data-testid={`report-${stage}`} data-status={String(report.status)}>
      <Group justify="space-between" mb="xs">
        <Group gap="xs">
          <Text fw={600}>{t('mig.report', { stage: t(`mig.step.${stage}` as MessageKey) })}</Text>
          <Badge variant="light" tt="none">
            <Raw>{String(report.status)}</Raw>
          </Badge>
        </Group>
        {link}
      </Group>
      <SimpleGrid cols={{ base: 2, lg: 4 }} spacing="xs">
        {facts(stage, report).map(([label, member, v]) => (
          <Fact key={member} label={label} member={member} v={v} />
        ))}
      </SimpleGrid>
      {stage === 'verify' && report.cutover_ready === false && (
        <Text size="xs" c="dimmed" mt="xs" data-testid="cutover-note">
          {t('mig.fact.cutoverNormal')}
        </Text>
      )}
    </Card>
  );
}
