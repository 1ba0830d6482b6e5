import { Badge, Card, Group, Stack, Switch, Table, Text } from '@mantine/core';
import { useState } from 'react';
import { useQueries } from '@tanstack/react-query';
import { MIGRATION_STAGES, type Plan, type PlanDetail } from '@parley/shared';
import { unwrap } from '../../api/queries.ts';
import { Raw, useI18n } from '../../i18n/i18n.tsx';
import type { MessageKey } from '../../i18n/messages.ts';
import { usePlatform } from '../../platform/context.tsx';
import { crossChecks, type CrossCheck, type StageReports } from './model/cross-checks.ts';
import { currentReport } from './model/stages.ts';

/** The report each stage's viewer shows (its last good run's), read once each (reports never change). */
export function usePlanReports(detail: PlanDetail): { reports: StageReports; loading: boolean } {
  const { host } = usePlatform();
  const picks = MIGRATION_STAGES.map((s) => [s, currentReport(detail.runs, s)] as const).filter(([, r]) => r?.report_file);
  const results = useQueries({
    queries: picks.map(([, r]) => ({
      queryKey: ['migration', 'report', detail.summary.id, r!.report_file],
      queryFn: async () => unwrap(await host.migration.report({ plan_id: detail.summary.id, file: r!.report_file! })),
      staleTime: Infinity,
      retry: false,
    })),
  });
  const reports: StageReports = {};
  picks.forEach(([s], i) => {
    const body = results[i]?.data?.report;
    if (body && typeof body === 'object') reports[s as keyof StageReports] = body as Record<string, unknown>;
  });
  return { reports, loading: results.some((r) => r.isLoading) };
}

const COLOR = { pass: 'green', fail: 'red', pending: 'gray' } as const;

export function useCrossChecks(detail: PlanDetail): { checks: CrossCheck[]; loading: boolean; reports: StageReports } {
  const { reports, loading } = usePlanReports(detail);
  return { checks: crossChecks(detail.plan as Plan, detail.summary.canonical_sha256, reports), loading, reports };
}

/** The seed's verification rules across this plan's reports, each passed, failed or pending, with the values compared. */
export function CrossChecksPanel({ detail, values = false }: { detail: PlanDetail; values?: boolean }) {
  const { t } = useI18n();
  const { checks } = useCrossChecks(detail);
  const [all, setAll] = useState(values);
  return (
    <Card withBorder padding="sm" data-testid="cross-checks">
      <Group justify="space-between" align="flex-start">
        <Stack gap={0}>
          <Text fw={600}>{t('mig.cross.title')}</Text>
          <Text size="xs" c="dimmed" mb="xs">
            {t('mig.cross.hint')}
          </Text>
        </Stack>
        <Switch size="xs" label={t('mig.cross.values')} checked={all} onChange={(e) => setAll(e.currentTarget.checked)} />
      </Group>
      <Table verticalSpacing={4} fz="sm">
        <Table.Tbody>
          {checks.map((c) => (
            <Table.Tr key={c.id} data-check={c.id} data-state={c.state}>
              <Table.Td w={110}>
                <Badge color={COLOR[c.state]} variant={c.state === 'pass' ? 'filled' : 'light'} style={{ overflow: 'visible' }}>
                  {t(`mig.cross.${c.state}` as MessageKey)}
                </Badge>
              </Table.Td>
              <Table.Td>
                <Stack gap={0}>
                  <Text size="sm">{t(`mig.cross.${c.id}` as MessageKey)}</Text>
                  <Group gap={0}>
                    {(all || c.state === 'fail' ? c.values : []).map((v, i) => (
                      <Text key={i} size="xs" c="dimmed" ff="monospace" w="100%" style={{ wordBreak: 'break-all' }}>
                        <Raw>{v}</Raw>
                      </Text>
                    ))}
                  </Group>
                </Stack>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Card>
  );
}
