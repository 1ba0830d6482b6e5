import { Badge, Card, Group, NavLink, Text, ThemeIcon } from '@mantine/core';
import { useCallback } from 'react';
import { Link, useSearchParams } from 'react-router';
import type { MigrationState, PlanDetail, Plan } from '@parley/shared';
import { Raw, useI18n } from '../../i18n/i18n.tsx';
import type { MessageKey } from '../../i18n/messages.ts';
import { acceptanceItems, preflightItems, progressOf } from './model/checklist.ts';
import { isStage, lastRun, stageState, STEPS, type StageState, type StepId } from './model/stages.ts';

/** The link to a step, keeping the chosen plan (`?plan=`). */
export function useStepHref(): (step: StepId | 'reports', extra?: Record<string, string>) => string {
  const [params] = useSearchParams();
  return useCallback(
    (step, extra = {}) => {
      const p = new URLSearchParams();
      const plan = params.get('plan');
      if (plan) p.set('plan', plan);
      for (const [k, v] of Object.entries(extra)) p.set(k, v);
      const q = p.toString();
      return `/migration/${step}${q ? `?${q}` : ''}`;
    },
    [params],
  );
}

export const STATE_COLOR: Record<StageState, string> = {
  todo: 'gray',
  running: 'blue',
  done: 'green',
  blocked: 'orange',
  failed: 'red',
  cancelled: 'yellow',
};

type Summary = { state: StageState | 'optional' | 'locked'; note?: string; raw?: boolean };

function summarise(
  step: StepId,
  state: MigrationState,
  detail: PlanDetail | undefined,
  t: (k: MessageKey, v?: Record<string, string | number>) => string,
): Summary {
  if (step === 'preflight') {
    const p = progressOf(preflightItems(state.preflight ?? { version: 1, items: {}, checks: {}, fields: {} }));
    return { state: p.done === p.total ? 'done' : 'todo', note: t('mig.items', p) };
  }
  if (!detail) return { state: step === 'plan' ? 'todo' : 'locked' };
  if (step === 'plan') return { state: 'done', note: `${detail.summary.id} · ${detail.summary.sha256.slice(0, 8)}`, raw: true };
  if (step === 'accept') {
    // The report-proven item is counted by verify's state here; the step itself also reads the cross-report checks.
    const verified = { ok: stageState(detail.runs, 'verify') === 'done', evidence: [] };
    const rehearsalOnly = state.preflight?.fields.rehearsal_only === true;
    const p = progressOf(acceptanceItems({ plan: detail.plan as Plan, doc: detail.checklist, verified, rehearsalOnly }));
    return { state: p.done === p.total ? 'done' : 'todo', note: t('mig.items', { done: p.done, total: p.total }) };
  }
  if (!isStage(step)) return { state: 'todo' };
  if (step === 'export-map' && !(detail.plan as Plan).messages?.compact_sequences) return { state: 'optional', note: t('mig.notNeeded') };
  const s = stageState(detail.runs, step);
  const r = lastRun(detail.runs, step);
  return { state: s, ...(r?.report_status ? { note: r.report_status, raw: true } : {}) };
}

/** The wizard's steps, each with its state and what it produced (a plan digest, a report status, items done). */
export function StepsNav({ step, state, detail }: { step: StepId; state: MigrationState; detail: PlanDetail | undefined }) {
  const { t } = useI18n();
  const href = useStepHref();
  return (
    <Card withBorder padding={4} data-testid="steps">
      {STEPS.map((s, i) => {
        const sum = summarise(s, state, detail, t);
        const color = sum.state === 'optional' || sum.state === 'locked' ? 'gray' : STATE_COLOR[sum.state];
        return (
          <NavLink
            key={s}
            component={Link}
            to={href(s)}
            active={s === step}
            data-step-link={s}
            data-step-state={sum.state}
            leftSection={
              <ThemeIcon size="sm" radius="xl" color={color} variant={sum.state === 'done' ? 'filled' : 'light'}>
                <Text size="xs" fw={700}>
                  {sum.state === 'done' ? '✓' : i + 1}
                </Text>
              </ThemeIcon>
            }
            label={t(`mig.step.${s}` as MessageKey)}
            description={
              <Group gap={4} wrap="nowrap">
                <Badge size="xs" variant="light" color={color}>
                  {t(`mig.state.${sum.state}` as MessageKey)}
                </Badge>
                {sum.note && (
                  <Text size="xs" c="dimmed" truncate ff={sum.raw ? 'monospace' : undefined}>
                    {sum.raw ? <Raw>{sum.note}</Raw> : sum.note}
                  </Text>
                )}
              </Group>
            }
          />
        );
      })}
    </Card>
  );
}
