import { ActionIcon, Button, Group, NativeSelect, Text, Title, Tooltip } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { useNodeList } from '../api/queries.ts';
import { useI18n } from '../i18n/i18n.tsx';
import { RANGE_CHOICES, REFRESH_CHOICES, setControls, useControls, WINDOW_CHOICES } from './controls.ts';
import { seriesStore } from './series.ts';
import { useNow } from './use-now.ts';

/** When any ops query last succeeded (ms), kept from the query cache's events. */
function useLastSuccess(): number | undefined {
  const client = useQueryClient();
  const [at, setAt] = useState<number>();
  useEffect(
    () =>
      client.getQueryCache().subscribe((e) => {
        if (e.type === 'updated' && e.action.type === 'success' && e.query.queryKey[0] !== 'nodes') setAt(Date.now());
      }),
    [client],
  );
  return at;
}

/** Human label of a window or range ("10s" → "10 s", 300 → "5 min"). */
export function useDurationLabel() {
  const { t } = useI18n();
  return (sec: number) => (sec < 60 ? t('unit.seconds', { n: sec }) : t('unit.minutes', { n: sec / 60 }));
}

export function windowSeconds(w: string): number {
  const n = Number.parseInt(w, 10);
  return w.endsWith('m') ? n * 60 : n;
}

/**
 * The page-level controls (console.md §2.2): context, aggregation window,
 * chart range, refresh interval, pause, refresh now, and data age.
 */
export function TopBar() {
  const { t } = useI18n();
  const c = useControls();
  const client = useQueryClient();
  const nodes = useNodeList();
  const now = useNow(1000);
  const last = useLastSuccess();
  const dur = useDurationLabel();

  // A different context or window makes the kept history meaningless.
  useEffect(() => seriesStore.clear(), [c.context, c.window]);

  return (
    <Group justify="space-between" h="100%" px="md" wrap="nowrap" gap="sm">
      <Group gap="xs" wrap="nowrap">
        <Title order={4} className="brand">
          Parley
        </Title>
        <Text size="sm" c="dimmed" visibleFrom="lg">
          {t('app.console')}
        </Text>
      </Group>
      <Group gap="xs" wrap="nowrap">
        <NativeSelect
          size="xs"
          aria-label={t('controls.context')}
          data-testid="context-select"
          value={c.context}
          onChange={(e) => setControls({ context: e.currentTarget.value })}
          data={[
            { value: '', label: t('controls.allNodes', { n: nodes.data?.length ?? 0 }) },
            ...c.contexts.map((x) => ({ value: x.name, label: x.name })),
          ]}
        />
        <Tooltip label={t('controls.explain', { window: dur(windowSeconds(c.window)), range: dur(c.rangeSec) })}>
          <Group gap={4} wrap="nowrap">
            <Text size="xs" c="dimmed">
              {t('controls.window')}
            </Text>
            <NativeSelect
              size="xs"
              aria-label={t('controls.window')}
              data-testid="window-select"
              value={c.window}
              onChange={(e) => setControls({ window: e.currentTarget.value as typeof c.window })}
              data={WINDOW_CHOICES.map((w) => ({ value: w, label: dur(windowSeconds(w)) }))}
            />
            <Text size="xs" c="dimmed">
              {t('controls.range')}
            </Text>
            <NativeSelect
              size="xs"
              aria-label={t('controls.range')}
              data-testid="range-select"
              value={String(c.rangeSec)}
              onChange={(e) => setControls({ rangeSec: Number(e.currentTarget.value) })}
              data={RANGE_CHOICES.map((r) => ({ value: String(r), label: dur(r) }))}
            />
          </Group>
        </Tooltip>
        <Text size="xs" c="dimmed">
          {t('controls.refresh')}
        </Text>
        <NativeSelect
          size="xs"
          aria-label={t('controls.refresh')}
          data-testid="refresh-select"
          value={String(c.refreshMs)}
          onChange={(e) => setControls({ refreshMs: Number(e.currentTarget.value) })}
          data={REFRESH_CHOICES.map((r) => ({ value: String(r), label: r === 0 ? t('controls.off') : dur(r / 1000) }))}
        />
        <Button
          size="xs"
          variant={c.paused ? 'filled' : 'default'}
          color={c.paused ? 'yellow' : undefined}
          onClick={() => setControls({ paused: !c.paused })}
          data-testid="pause"
        >
          {c.paused ? t('controls.resume') : t('controls.pause')}
        </Button>
        <Tooltip label={t('controls.refreshNow')}>
          <ActionIcon
            variant="default"
            size="md"
            aria-label={t('controls.refreshNow')}
            onClick={() => void client.invalidateQueries({ predicate: (q) => q.queryKey[0] !== 'nodes' })}
          >
            ↻
          </ActionIcon>
        </Tooltip>
        <Text size="xs" c={c.paused ? 'yellow' : 'dimmed'} miw={110} ta="right" data-testid="updated-ago">
          {c.paused
            ? t('controls.paused')
            : last === undefined
              ? t('controls.noData')
              : t('controls.updatedAgo', { n: Math.max(0, Math.round((now - last) / 1000)) })}
        </Text>
      </Group>
    </Group>
  );
}
