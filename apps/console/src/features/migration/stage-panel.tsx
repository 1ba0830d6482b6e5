import { Alert, Anchor, Badge, Button, Card, Code, Group, List, Stack, Table, Text, TextInput } from '@mantine/core';
import { useEffect, useState } from 'react';
import { Link } from 'react-router';
import { STAGE_SUCCESS, STAGES_WITH_ARCHIVE, type MigrationStage, type PlanDetail, type RunRecord } from '@parley/shared';
import { Raw, useI18n } from '../../i18n/i18n.tsx';
import { mono } from './plan-fields.tsx';
import type { MessageKey } from '../../i18n/messages.ts';
import { usePlatform } from '../../platform/context.tsx';
import { useRefreshMigration, useReport, useRunFollow, value } from './api.ts';
import { Blockers } from './blockers.tsx';
import { CrossChecksPanel } from './cross-checks-panel.tsx';
import { gate, lastRun, stageState } from './model/stages.ts';
import { ReportSummary } from './report-summary.tsx';
import { RunLog } from './run-log.tsx';
import { STATE_COLOR, useStepHref } from './steps-nav.tsx';

/** What a finished run came to, in the operator's words, with the stage's own rerun rule after a cancel. */
function Outcome({ run, report }: { run: RunRecord; report: Record<string, unknown> | undefined }) {
  const { t } = useI18n();
  const errors = Array.isArray(report?.errors) ? (report.errors as string[]) : [];
  if (run.state === 'running') return null;
  if (run.state === 'succeeded')
    return (
      <Alert
        color="green"
        title={
          <>
            {t('mig.outcome.ok')} <Raw>{run.report_status}</Raw>
          </>
        }
        data-testid="outcome"
        data-outcome="succeeded"
      >
        {run.stage === 'verify' ? t('mig.outcome.verifyNote') : t(`mig.stage.${run.stage}.next` as MessageKey)}
      </Alert>
    );
  if (run.state === 'cancelled')
    return (
      <Alert color="yellow" title={t('mig.outcome.cancelled')} data-testid="outcome" data-outcome="cancelled">
        {t(`mig.rerun.${run.stage}` as MessageKey)}
      </Alert>
    );
  const blocked = run.report_status === 'blocked' || run.report_status === 'incomplete';
  return (
    <Alert
      color={blocked ? 'orange' : 'red'}
      title={blocked ? t(run.stage === 'diagnose' ? 'mig.outcome.diagnose' : 'mig.outcome.blocked') : t('mig.outcome.failed')}
      data-testid="outcome"
      data-outcome={blocked ? 'blocked' : 'failed'}
    >
      <List size="sm">
        {(errors.length > 0 ? errors : [run.error ?? t('mig.outcome.noReport')]).map((e, i) => (
          <List.Item key={i}>
            <Raw>{e}</Raw>
          </List.Item>
        ))}
      </List>
    </Alert>
  );
}

/**
 * A stage step: where it will run (proposed by the wizard in the plan's
 * folder; the host refuses anything outside it), the command line it runs,
 * Start / Cancel, the live stderr, the outcome and report, and for prepare
 * and diagnose the blockers turned into plan changes.
 */
export function StagePanel({ stage, detail }: { stage: MigrationStage; detail: PlanDetail }) {
  const { t, f } = useI18n();
  const { host } = usePlatform();
  const refresh = useRefreshMigration();
  const href = useStepHref();
  const proposal = detail.proposals[stage]!;
  const wantsArchive = STAGES_WITH_ARCHIVE.includes(stage);
  const [workspace, setWorkspace] = useState(proposal.workspace);
  const [archive, setArchive] = useState(proposal.archive ?? '');
  const running = detail.runs.find((r) => r.state === 'running' && r.stage === stage);
  const last = lastRun(detail.runs, stage);
  // The last run is followed too: while this console still holds it, its lines come back after a reload.
  const [followId, setFollowId] = useState(running?.id ?? last?.id);
  const follow = useRunFollow(followId);
  const [error, setError] = useState<string>();
  useEffect(() => {
    setWorkspace(proposal.workspace);
    setArchive(proposal.archive ?? '');
  }, [proposal.workspace, proposal.archive]);

  const shown: RunRecord | undefined = follow.status && follow.status.id === followId ? follow.status : last;
  const report = useReport(detail.summary.id, shown?.state !== 'running' ? shown?.report_file : undefined);
  const body = report.data?.report as Record<string, unknown> | undefined;
  const g = gate(detail, stage);
  const isRunning = shown?.state === 'running';
  const planFile = `${detail.summary.dir}/plan.json`;
  const argv = [
    'parleyctl',
    'migrate',
    stage,
    '--plan',
    planFile,
    '--workspace',
    workspace,
    ...(wantsArchive ? ['--archive', archive] : []),
  ];

  const start = async () => {
    setError(undefined);
    try {
      const run = value(
        await host.migration.runStart({ plan_id: detail.summary.id, stage, workspace, ...(wantsArchive ? { archive } : {}) }),
      );
      setFollowId(run.id);
      await refresh();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const cancel = async () => {
    if (!shown) return;
    try {
      value(await host.migration.runCancel({ run_id: shown.id }));
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const state = stageState(detail.runs, stage);
  const history = detail.runs.filter((r) => r.stage === stage).reverse();

  return (
    <Stack gap="sm" data-testid={`stage-${stage}`} data-stage-state={isRunning ? 'running' : state}>
      <Card withBorder padding="sm">
        <Group justify="space-between" align="flex-start">
          <Stack gap={2} style={{ flex: 1 }}>
            <Group gap="xs">
              <Text fw={700}>{t(`mig.step.${stage}` as MessageKey)}</Text>
              <Badge color={STATE_COLOR[isRunning ? 'running' : state]}>
                {t(`mig.state.${isRunning ? 'running' : state}` as MessageKey)}
              </Badge>
              <Text size="xs" c="dimmed">
                {t('mig.expects')} <Raw>{STAGE_SUCCESS[stage]}</Raw>
              </Text>
            </Group>
            <Text size="sm" c="dimmed">
              {t(`mig.stage.${stage}.what` as MessageKey)}
            </Text>
          </Stack>
        </Group>
        {!g.open && !isRunning && (
          <Alert color="gray" mt="xs" data-testid="gate">
            {g.why === 'needs'
              ? t('mig.gate.needs', { stage: t(`mig.step.${g.stage!}` as MessageKey) })
              : g.why === 'running'
                ? t('mig.gate.running', { stage: t(`mig.step.${g.stage!}` as MessageKey) })
                : t('mig.gate.notCompact')}
          </Alert>
        )}
        <Stack gap={6} mt="sm">
          <TextInput
            size="xs"
            label={t('mig.workspace')}
            styles={mono}
            value={workspace}
            onChange={(e) => setWorkspace(e.currentTarget.value)}
            data-testid="workspace"
          />
          {wantsArchive && (
            <TextInput
              size="xs"
              label={t('mig.archive')}
              styles={mono}
              value={archive}
              onChange={(e) => setArchive(e.currentTarget.value)}
              data-testid="archive"
            />
          )}
          <Text size="xs" c="dimmed">
            {t('mig.pathsHint', { dir: detail.summary.dir })}
          </Text>
          <Code block data-raw data-testid="command-line" style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-all' }}>
            {argv.join(' ')}
          </Code>
          <Group>
            <Button
              onClick={() => void start()}
              disabled={!g.open || isRunning}
              variant={state === 'done' ? 'default' : 'filled'}
              data-testid="run-stage"
            >
              {t(state === 'done' ? 'mig.runAgain' : 'mig.run', { stage: t(`mig.step.${stage}` as MessageKey) })}
            </Button>
            {isRunning && (
              <Button color="red" variant="light" onClick={() => void cancel()} data-testid="cancel-stage">
                {t('mig.cancel')}
              </Button>
            )}
          </Group>
          {error && (
            <Alert color="red" data-testid="run-error">
              <Raw>{error}</Raw>
            </Alert>
          )}
        </Stack>
      </Card>
      {shown && (
        <RunLog
          run={shown}
          lines={follow.status?.id === shown.id ? follow.lines : (report.data?.log ?? [])}
          kept={shown.log_file && `${detail.summary.dir}/reports/${shown.log_file}`}
        />
      )}
      {shown && <Outcome run={shown} report={body} />}
      {body && shown && (
        <ReportSummary
          stage={stage}
          report={body}
          link={
            <Anchor component={Link} to={href('reports', { file: shown.report_file! })} size="sm">
              {t('mig.openReport')}
            </Anchor>
          }
        />
      )}
      {body && (stage === 'diagnose' || stage === 'prepare') && <Blockers report={body} detail={detail} />}
      {stage === 'verify' && state === 'done' && <CrossChecksPanel detail={detail} values />}
      {history.length > 1 && (
        <Card withBorder padding="sm">
          <Text fw={600} size="sm" mb={4}>
            {t('mig.history')}
          </Text>
          <Table fz="xs" verticalSpacing={2}>
            <Table.Tbody>
              {history.map((r) => (
                <Table.Tr key={r.id}>
                  <Table.Td className="num">{f.dateTime(Date.parse(r.started_at))}</Table.Td>
                  <Table.Td>{t(`mig.run.${r.state}` as MessageKey)}</Table.Td>
                  <Table.Td>
                    <Raw>{r.report_status ?? r.error ?? ''}</Raw>
                  </Table.Td>
                  <Table.Td ff="monospace">
                    <Raw>{r.workspace.slice(detail.summary.dir.length + 1)}</Raw>
                  </Table.Td>
                  <Table.Td>
                    {r.report_file && (
                      <Anchor component={Link} to={href('reports', { file: r.report_file })}>
                        {t('mig.openReport')}
                      </Anchor>
                    )}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Card>
      )}
    </Stack>
  );
}
