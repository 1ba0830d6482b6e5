import { Alert, Button, Card, Group, Stack, Switch, Text, TextInput } from '@mantine/core';
import { useState } from 'react';
import type { MigrationState } from '@parley/shared';
import { Raw, useI18n } from '../../i18n/i18n.tsx';
import { mono } from './plan-fields.tsx';
import { usePlatform } from '../../platform/context.tsx';
import { ItemRow } from './checklist-row.tsx';
import { useRefreshMigration, value } from './api.ts';
import { preflightItems, progressOf } from './model/checklist.ts';

/**
 * Step 1: the seed's preconditions. The operator ticks what only a person
 * can know (v2 drained and stopped, auto-restart off, …); the host proves
 * the rest with parleyctl itself: its version and build against the target
 * servers' commit, and `db info` of each source of the chosen plan (shards,
 * Pebble format, LOCK files nobody holds).
 */
export function PreflightPanel({ state, planId }: { state: MigrationState; planId: string | undefined }) {
  const { t } = useI18n();
  const { host } = usePlatform();
  const refresh = useRefreshMigration();
  const doc = state.preflight ?? { version: 1 as const, items: {}, checks: {}, fields: {} };
  const items = preflightItems(doc);
  const p = progressOf(items);
  const [commit, setCommit] = useState(doc.fields.target_commit ?? '');
  const [error, setError] = useState<string>();
  const setFields = async (fields: { target_commit?: string; rehearsal_only?: boolean }) => {
    setError(undefined);
    try {
      value(await host.migration.setFields({ scope: 'preflight', fields }));
      await refresh();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const manual = items.filter((i) => i.kind === 'manual');
  const tool = items.find((i) => i.id === 'tool')!;
  const sources = items.find((i) => i.id === 'sources')!;
  return (
    <Stack gap="sm" data-testid="preflight">
      <Text size="sm" c="dimmed">
        {t('mig.preflight.intro')} {t('mig.items', p)}
      </Text>
      {doc.fields.rehearsal_only && (
        <Alert color="orange" title={t('mig.rehearsalOnly')} data-testid="rehearsal-warning">
          {t('mig.rehearsalOnly.hint')}
        </Alert>
      )}
      <Card withBorder padding="sm">
        <Text fw={600} mb="xs">
          {t('mig.preflight.manual')}
        </Text>
        <Stack gap={6}>
          {manual.map((i) => (
            <ItemRow key={i.id} item={i} scope="preflight" />
          ))}
          <Switch
            mt="xs"
            label={t('mig.rehearsalSwitch')}
            checked={doc.fields.rehearsal_only === true}
            onChange={(e) => void setFields({ rehearsal_only: e.currentTarget.checked })}
            data-testid="rehearsal-only"
          />
        </Stack>
      </Card>
      <Card withBorder padding="sm">
        <Text fw={600} mb="xs">
          {t('mig.preflight.auto')}
        </Text>
        <Stack gap={6}>
          <Group align="flex-end">
            <TextInput
              label={t('mig.targetCommit')}
              description={t('mig.targetCommit.hint')}
              value={commit}
              onChange={(e) => setCommit(e.currentTarget.value)}
              w={420}
              styles={mono}
              data-testid="target-commit"
            />
            <Button variant="default" onClick={() => void setFields({ target_commit: commit.trim() })} data-testid="save-commit">
              {t('mig.save')}
            </Button>
          </Group>
          <ItemRow item={tool} scope="preflight" />
          {planId ? (
            <ItemRow item={sources} scope="preflight" planId={planId} />
          ) : (
            <Alert color="blue" variant="light">
              {t('mig.sourcesNeedPlan')}
            </Alert>
          )}
        </Stack>
        {error && (
          <Text size="sm" c="red" mt="xs">
            <Raw>{error}</Raw>
          </Text>
        )}
      </Card>
    </Stack>
  );
}
