import { Alert, Button, FileButton, Group, Stack, Text, Title } from '@mantine/core';
import { useState } from 'react';
import { useNodeViews } from '../../api/node-views.ts';
import { Raw, useI18n } from '../../i18n/i18n.tsx';
import { ActiveAlertsCard } from '../overview/components/active-alerts.tsx';
import { HotPressureCard } from '../overview/components/hot-pressure.tsx';
import { NodeTable } from '../overview/components/node-table.tsx';
import { VerdictHero } from '../overview/components/verdict-hero.tsx';
import { downloadSnapshots } from './download.ts';
import { MAX_SNAPSHOT_FILE, readSaved, savedViews, type SavedSnapshots } from './view-model.ts';

/** `/snapshots`: save the current snapshots as JSON, open a saved one read-only (works offline). */
export function SnapshotsPage() {
  const { t, f } = useI18n();
  const { views, now } = useNodeViews('overview');
  const [opened, setOpened] = useState<{ name: string; saved: SavedSnapshots }>();
  const [error, setError] = useState<string>();

  const open = async (file: File | null) => {
    if (!file) return;
    setError(undefined);
    if (file.size > MAX_SNAPSHOT_FILE) return setError(t('snapshots.tooLarge', { mib: MAX_SNAPSHOT_FILE / 1024 / 1024 }));
    const r = readSaved(await file.text());
    if (!r.ok) return setError(r.error);
    setOpened({ name: file.name, saved: r.value });
  };

  const read = opened ? savedViews(opened.saved) : [];
  return (
    <Stack gap="sm" data-page="snapshots">
      <Title order={3}>{t('nav.snapshots')}</Title>
      <Text size="sm" c="dimmed">
        {t('snapshots.intro')}
      </Text>
      <Group>
        <Button onClick={() => downloadSnapshots(views, now)} disabled={!views.some((v) => v.top)} data-testid="save-snapshot">
          {t('snapshots.save')}
        </Button>
        <FileButton onChange={(file) => void open(file)} accept="application/json,.json">
          {(props) => (
            <Button variant="default" {...props} data-testid="open-snapshot">
              {t('snapshots.open')}
            </Button>
          )}
        </FileButton>
      </Group>
      {error && (
        <Alert color="grape" title={t('snapshots.unreadable')} data-state="bad_response">
          <Raw>{error}</Raw>
        </Alert>
      )}
      {opened && (
        <Stack gap="sm" data-testid="opened-snapshot">
          <Alert color="blue" variant="light" title={t('snapshots.readOnly')}>
            <Raw>{opened.name}</Raw> · {t('snapshots.savedAt', { time: f.dateTime(Date.parse(opened.saved.saved_at)) })}
          </Alert>
          <VerdictHero views={read} />
          <NodeTable views={read} readOnly />
          <Group grow align="stretch">
            <HotPressureCard views={read} />
            <ActiveAlertsCard views={read} />
          </Group>
        </Stack>
      )}
    </Stack>
  );
}
