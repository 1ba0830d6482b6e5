import { Accordion, Alert, Badge, Card, Code, Grid, Loader, NavLink, ScrollArea, Stack, Table, Text, Title } from '@mantine/core';
import { useSearchParams } from 'react-router';
import type { MigrationStage, PlanDetail } from '@parley/shared';
import { Raw, useI18n } from '../../i18n/i18n.tsx';
import type { MessageKey } from '../../i18n/messages.ts';
import { useMigrationState, usePlanDetail, useReport, useSelectedPlan } from './api.ts';
import { CrossChecksPanel } from './cross-checks-panel.tsx';
import { RootSetup } from './root-setup.tsx';
import { ReportSummary } from './report-summary.tsx';

type Finding = { code: string; detail: string };

function Viewer({ detail, file }: { detail: PlanDetail; file: string }) {
  const { t } = useI18n();
  const r = useReport(detail.summary.id, file);
  if (r.isLoading) return <Loader size="sm" />;
  if (r.error) return <Alert color="red">{r.error.message}</Alert>;
  const body = (r.data?.report ?? {}) as Record<string, unknown>;
  const errors = (Array.isArray(body.errors) ? body.errors : []) as string[];
  const warnings = (Array.isArray(body.warnings) ? body.warnings : []) as Finding[];
  const blockers = (Array.isArray(body.blockers) ? body.blockers : []) as Finding[];
  return (
    <Stack gap="sm" data-testid="report-viewer" data-file={file}>
      <ReportSummary stage={body.stage as MigrationStage} report={body} />
      {errors.length > 0 && (
        <Alert color="red" title={t('mig.viewer.errors')}>
          {errors.map((e, i) => (
            <Text key={i} size="sm">
              <Raw>{e}</Raw>
            </Text>
          ))}
        </Alert>
      )}
      {[
        ['mig.viewer.blockers', blockers],
        ['mig.viewer.warnings', warnings],
      ].map(([label, list]) =>
        (list as Finding[]).length > 0 ? (
          <Card withBorder padding="sm" key={label as string}>
            <Text fw={600} size="sm" mb={4}>
              {t(label as MessageKey, { n: (list as Finding[]).length })}
            </Text>
            <Table fz="xs" verticalSpacing={2}>
              <Table.Tbody>
                {(list as Finding[]).map((w, i) => (
                  <Table.Tr key={i}>
                    <Table.Td w={220}>
                      <Raw>{w.code}</Raw>
                    </Table.Td>
                    <Table.Td>
                      <Raw>{w.detail}</Raw>
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Card>
        ) : null,
      )}
      <Accordion variant="contained" multiple>
        <Accordion.Item value="raw">
          <Accordion.Control>{t('mig.viewer.raw')}</Accordion.Control>
          <Accordion.Panel>
            <ScrollArea h={420} type="auto">
              <Code block data-testid="raw-report">
                {JSON.stringify(body, null, 2)}
              </Code>
            </ScrollArea>
          </Accordion.Panel>
        </Accordion.Item>
        <Accordion.Item value="log">
          <Accordion.Control>{t('mig.viewer.log', { n: r.data?.log.length ?? 0 })}</Accordion.Control>
          <Accordion.Panel>
            <Code block>{(r.data?.log ?? []).join('\n')}</Code>
          </Accordion.Panel>
        </Accordion.Item>
      </Accordion>
    </Stack>
  );
}

/** `/migration/reports`: every report of the chosen plan, opened in its viewer, and the cross-report checks. */
export function ReportsPage() {
  const { t, f } = useI18n();
  const state = useMigrationState();
  const [planId] = useSelectedPlan(state.data);
  const detail = usePlanDetail(state.data?.root ? planId : undefined);
  const [params, setParams] = useSearchParams();
  const runs = [...(detail.data?.runs ?? [])].filter((r) => r.report_file).reverse();
  const file = params.get('file') ?? runs[0]?.report_file;
  return (
    <Stack gap="sm" data-page="migration-reports">
      <Title order={3}>{t('mig.reports.title')}</Title>
      {state.data && !state.data.root && <RootSetup />}
      {state.data?.root && !planId && <Alert color="blue">{t('mig.needPlan')}</Alert>}
      {detail.data && (
        <>
          <Text size="sm" c="dimmed">
            {t('mig.reports.intro', { id: detail.data.summary.id })}
          </Text>
          <CrossChecksPanel detail={detail.data} />
          <Grid gap="sm">
            <Grid.Col span={{ base: 12, md: 3 }}>
              <Card withBorder padding={4} data-testid="report-list">
                {runs.length === 0 && (
                  <Text size="sm" c="dimmed" p="xs">
                    {t('mig.reports.none')}
                  </Text>
                )}
                {runs.map((r) => (
                  <NavLink
                    key={r.id}
                    active={r.report_file === file}
                    onClick={() =>
                      setParams((p) => {
                        p.set('file', r.report_file!);
                        return p;
                      })
                    }
                    label={t(`mig.step.${r.stage}` as MessageKey)}
                    description={f.dateTime(Date.parse(r.started_at))}
                    rightSection={
                      <Badge size="xs" variant="light" color={r.state === 'succeeded' ? 'green' : 'orange'} tt="none">
                        <Raw>{r.report_status}</Raw>
                      </Badge>
                    }
                    data-report={r.report_file}
                  />
                ))}
              </Card>
            </Grid.Col>
            <Grid.Col span={{ base: 12, md: 9 }}>{file && <Viewer detail={detail.data} file={file} />}</Grid.Col>
          </Grid>
        </>
      )}
    </Stack>
  );
}
