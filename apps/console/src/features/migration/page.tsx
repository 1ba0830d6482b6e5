import { Alert, Anchor, Badge, Card, Grid, Group, Loader, NativeSelect, Stack, Text, TextInput, Title } from '@mantine/core';
import type { MigrationState, PlanDetail } from '@parley/shared';
import { Link, Navigate, useParams } from 'react-router';
import { Raw, useI18n } from '../../i18n/i18n.tsx';
import { AcceptancePanel } from './acceptance.tsx';
import { useMigrationState, useOperator, usePlanDetail, useSelectedPlan } from './api.ts';
import { isStage, STEPS, type StepId } from './model/stages.ts';
import { PlanEditor } from './plan-editor.tsx';
import { PreflightPanel } from './preflight.tsx';
import { RootSetup } from './root-setup.tsx';
import { StagePanel } from './stage-panel.tsx';
import { StepsNav, useStepHref } from './steps-nav.tsx';

/** The wizard's header: where it works (root), on which plan, and who is ticking. */
function WizardHeader({ state, planId, select }: { state: MigrationState; planId: string | undefined; select: (id: string) => void }) {
  const { t } = useI18n();
  const [operator, setOperator] = useOperator();
  const plan = state.plans.find((p) => p.id === planId);
  return (
    <Card withBorder padding="sm">
      <Group justify="space-between" align="flex-end" wrap="wrap" gap="sm">
        <Stack gap={2}>
          <Text size="xs" c="dimmed">
            {t('mig.root')}
            {state.root_locked && ` · ${t('mig.rootLocked')}`}
          </Text>
          <Text ff="monospace" size="sm" data-testid="migration-root">
            <Raw>{state.root}</Raw>
          </Text>
        </Stack>
        <Group gap="sm" align="flex-end">
          <NativeSelect
            label={t('mig.plan')}
            value={planId ?? ''}
            onChange={(e) => select(e.currentTarget.value)}
            data={state.plans.length > 0 ? state.plans.map((p) => ({ value: p.id, label: p.id })) : [{ value: '', label: t('mig.noPlan') }]}
            w={140}
            data-testid="plan-select"
          />
          {plan && (
            <Stack gap={2}>
              <Text size="xs" c="dimmed">
                {t('mig.planSha')}
              </Text>
              <Badge variant="light" color="gray" ff="monospace" tt="none" data-testid="plan-sha">
                <Raw>{plan.sha256.slice(0, 16)}…</Raw>
              </Badge>
            </Stack>
          )}
          <TextInput
            label={t('mig.operator')}
            placeholder={t('mig.operatorHint')}
            value={operator}
            onChange={(e) => setOperator(e.currentTarget.value)}
            w={200}
            data-testid="operator"
          />
        </Group>
      </Group>
    </Card>
  );
}

function StepBody({
  step,
  state,
  detail,
  planId,
}: {
  step: StepId;
  state: MigrationState;
  detail: PlanDetail | undefined;
  planId: string | undefined;
}) {
  const { t } = useI18n();
  const href = useStepHref();
  if (step === 'preflight') return <PreflightPanel state={state} planId={planId} />;
  if (step === 'plan') return <PlanEditor state={state} detail={detail} />;
  if (!planId) {
    return (
      <Alert color="blue" title={t('mig.needPlan')}>
        <Anchor component={Link} to={href('plan')}>
          {t('mig.step.plan')}
        </Anchor>
      </Alert>
    );
  }
  if (!detail) return <Loader size="sm" />;
  if (step === 'accept') return <AcceptancePanel state={state} detail={detail} />;
  return isStage(step) ? <StagePanel key={`${planId}-${step}`} stage={step} detail={detail} /> : null;
}

/** `/migration/:step`: the migration wizard (seed 001), one step at a time beside the list of steps. */
export function MigrationPage() {
  const { t } = useI18n();
  const { step = 'preflight' } = useParams();
  const state = useMigrationState();
  const [planId, select] = useSelectedPlan(state.data);
  const detail = usePlanDetail(state.data?.root ? planId : undefined);
  if (!(STEPS as readonly string[]).includes(step)) return <Navigate to="/migration/preflight" replace />;
  return (
    <Stack gap="sm" data-page="migration" data-step={step}>
      <Title order={3}>{t('mig.title')}</Title>
      {state.error && (
        <Alert color="red" title={t('mig.hostError')}>
          <Raw>{state.error.message}</Raw>
        </Alert>
      )}
      {!state.data ? (
        state.isLoading && <Loader size="sm" />
      ) : !state.data.root ? (
        <RootSetup />
      ) : (
        <>
          <WizardHeader state={state.data} planId={planId} select={select} />
          <Grid gap="sm">
            <Grid.Col span={{ base: 12, md: 3 }}>
              <StepsNav step={step as StepId} state={state.data} detail={detail.data} />
            </Grid.Col>
            <Grid.Col span={{ base: 12, md: 9 }}>
              <StepBody step={step as StepId} state={state.data} detail={detail.data} planId={planId} />
            </Grid.Col>
          </Grid>
        </>
      )}
    </Stack>
  );
}
