import { Alert, Badge, Button, Card, Group, List, Stack, Table, Tabs, Text, Textarea } from '@mantine/core';
import { useMemo, useState } from 'react';
import { Plan as PlanSchema, type MigrationState, type PlanDetail } from '@parley/shared';
import { Raw, useI18n } from '../../i18n/i18n.tsx';
import { usePlatform } from '../../platform/context.tsx';
import { useRefreshMigration, useSelectedPlan, value } from './api.ts';
import { downloadText } from './download.ts';
import { formPointer, newPlan, parsePlanText, planText, validate } from './model/plan-form.ts';
import { sameJson } from './model/resolution.ts';
import { PlanForm } from './plan-form.tsx';

const DRAFT_KEY = 'parley.migration.draft';

interface Draft {
  text: string;
  /** The saved plan it started from. */
  base: string | null;
}

function loadDraft(): Draft | undefined {
  try {
    const d = JSON.parse(localStorage.getItem(DRAFT_KEY) ?? 'null') as Draft | null;
    return d && typeof d.text === 'string' ? d : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Step 2: the plan, as a form and as JSON: one document, validated on every
 * change by planIssues (the function parleyctl runs first), each problem at
 * its field. Saving writes a new `plan-<n>` folder (a changed plan starts
 * every stage afresh, seed rule 5) and shows its SHA-256. The draft stays in
 * this browser until saved.
 */
export function PlanEditor({ state, detail }: { state: MigrationState; detail: PlanDetail | undefined }) {
  const { t, f } = useI18n();
  const { host } = usePlatform();
  const refresh = useRefreshMigration();
  const [, select] = useSelectedPlan(state);
  const [draft, setDraftState] = useState<Draft>(
    () => loadDraft() ?? { text: planText(detail?.plan ?? newPlan(state.root)), base: detail?.summary.id ?? null },
  );
  const [error, setError] = useState<string>();
  const [saved, setSaved] = useState<string>();
  const setDraft = (d: Draft) => {
    localStorage.setItem(DRAFT_KEY, JSON.stringify(d));
    setDraftState(d);
  };
  const parsed = parsePlanText(draft.text);
  const doc = 'doc' in parsed ? parsed.doc : undefined;
  const v = useMemo(() => (doc === undefined ? undefined : validate(doc)), [doc]);
  const base = state.plans.find((p) => p.id === draft.base);
  const unchanged = detail !== undefined && draft.base === detail.summary.id && doc !== undefined && sameJson(doc, detail.plan);
  const elsewhere = v?.issues.filter((i) => !formPointer(i.pointer)) ?? [];

  const save = async () => {
    setError(undefined);
    try {
      const s = value(await host.migration.savePlan({ plan: doc, ...(draft.base ? { based_on: draft.base } : {}) }));
      setDraft({ text: planText(doc), base: s.id });
      setSaved(s.id);
      select(s.id);
      await refresh();
    } catch (err) {
      setError((err as Error).message);
    }
  };

  return (
    <Stack gap="sm" data-testid="plan-editor">
      <Card withBorder padding="sm">
        <Group justify="space-between">
          <Group gap="xs">
            {parsed && 'error' in parsed ? (
              <Badge color="red" data-testid="plan-validity" data-valid="false">
                {t('mig.plan.notJson')}
              </Badge>
            ) : v && v.issues.length > 0 ? (
              <Badge color="red" data-testid="plan-validity" data-valid="false">
                {t('mig.plan.problems', { n: v.issues.length })}
              </Badge>
            ) : (
              <Badge color="green" data-testid="plan-validity" data-valid="true">
                {t('mig.plan.valid')}
              </Badge>
            )}
            <Text size="sm" c="dimmed">
              {base ? t('mig.plan.basedOn', { id: base.id }) : t('mig.plan.new')}
              {unchanged && ` · ${t('mig.plan.unchanged')}`}
            </Text>
          </Group>
          <Group gap="xs">
            {detail && (
              <Button variant="subtle" size="xs" onClick={() => setDraft({ text: planText(detail.plan), base: detail.summary.id })}>
                {t('mig.plan.reset', { id: detail.summary.id })}
              </Button>
            )}
            <Button variant="subtle" size="xs" onClick={() => setDraft({ text: planText(newPlan(state.root)), base: null })}>
              {t('mig.plan.newPlan')}
            </Button>
            <Button
              variant="default"
              size="xs"
              onClick={() => downloadText('plan.schema.json', JSON.stringify(PlanSchema, null, 2), 'application/json')}
            >
              {t('mig.plan.schema')}
            </Button>
            <Button size="sm" disabled={!v || v.issues.length > 0 || unchanged} onClick={() => void save()} data-testid="save-plan">
              {t('mig.plan.save')}
            </Button>
          </Group>
        </Group>
        {saved && (
          <Alert color="green" mt="xs" data-testid="plan-saved">
            {t('mig.plan.saved', { id: saved })}
          </Alert>
        )}
        {error && (
          <Alert color="red" mt="xs" data-testid="plan-save-error">
            <Raw>{error}</Raw>
          </Alert>
        )}
        {elsewhere.length > 0 && (
          <List size="xs" c="red" mt="xs" data-testid="plan-problems">
            {elsewhere.map((i) => (
              <List.Item key={i.text}>
                <Raw>{i.text}</Raw>
              </List.Item>
            ))}
          </List>
        )}
      </Card>
      <Tabs defaultValue="form" keepMounted={false}>
        <Tabs.List>
          <Tabs.Tab value="form" data-testid="tab-form">
            {t('mig.plan.form')}
          </Tabs.Tab>
          <Tabs.Tab value="json" data-testid="tab-json">
            {t('mig.plan.json')}
          </Tabs.Tab>
        </Tabs.List>
        <Tabs.Panel value="form" pt="sm">
          {doc !== undefined && v ? (
            <PlanForm doc={doc} v={v} onChange={(next) => setDraft({ ...draft, text: planText(next) })} />
          ) : (
            <Alert color="red">{t('mig.plan.fixJson')}</Alert>
          )}
        </Tabs.Panel>
        <Tabs.Panel value="json" pt="sm">
          <Textarea
            value={draft.text}
            onChange={(e) => setDraft({ ...draft, text: e.currentTarget.value })}
            autosize
            minRows={16}
            maxRows={40}
            styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)', fontSize: 12 } }}
            error={'error' in parsed ? parsed.error : undefined}
            data-testid="plan-json"
          />
          {v && v.issues.length > 0 && (
            <List size="xs" c="red" mt="xs">
              {v.issues.map((i) => (
                <List.Item key={i.text}>
                  <Raw>{i.text}</Raw>
                </List.Item>
              ))}
            </List>
          )}
        </Tabs.Panel>
      </Tabs>
      {state.plans.length > 0 && (
        <Card withBorder padding="sm" data-testid="saved-plans">
          <Text fw={600} mb="xs">
            {t('mig.plan.savedPlans')}
          </Text>
          <Table verticalSpacing={4} fz="xs">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('mig.plan')}</Table.Th>
                <Table.Th>{t('mig.plan.savedAt')}</Table.Th>
                <Table.Th>{t('mig.plan.from')}</Table.Th>
                <Table.Th>{t('mig.plan.fileSha')}</Table.Th>
                <Table.Th>{t('mig.plan.canonicalSha')}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {[...state.plans].reverse().map((p) => (
                <Table.Tr key={p.id} data-plan={p.id}>
                  <Table.Td>
                    <Raw>{p.id}</Raw>
                  </Table.Td>
                  <Table.Td className="num">{p.saved_at ? f.dateTime(Date.parse(p.saved_at)) : ''}</Table.Td>
                  <Table.Td>
                    <Raw>{p.based_on ?? ''}</Raw>
                  </Table.Td>
                  <Table.Td ff="monospace">
                    <Raw>{p.sha256}</Raw>
                  </Table.Td>
                  <Table.Td ff="monospace">
                    <Raw>{p.canonical_sha256.slice(0, 16)}…</Raw>
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
