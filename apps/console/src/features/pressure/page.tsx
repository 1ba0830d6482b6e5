import { Card, Group, NativeSelect, SimpleGrid, Stack, Switch, Table, Text, Title, Tooltip } from '@mantine/core';
import { useState } from 'react';
import { PRESSURE_BANDS, pressureBand } from '@parley/shared';
import { useNodeViews } from '../../api/node-views.ts';
import { useControls } from '../../app/controls.ts';
import { seriesStore, useSeriesVersion } from '../../app/series.ts';
import { StateNotice } from '../../components/state-notice.tsx';
import { LevelBadge } from '../../components/badges.tsx';
import { bandVar, NODE_COLORS } from '../../components/levels.ts';
import { LimitBar } from '../../components/limit-bar.tsx';
import { TimeSeriesChart } from '../../components/time-series-chart.tsx';
import { Raw, useI18n } from '../../i18n/i18n.tsx';
import type { MessageKey } from '../../i18n/messages.ts';
import { SCORE_PREFIX } from '../../lib/series-store.ts';
import { nodeLabel } from '../overview/view-model.ts';
import { PressureTable } from './pressure-table.tsx';
import { componentScores, pressureRows, type PressureSort } from './view-model.ts';

/** `/pressure`: which queue or pool is saturated, against the 0.6 / 0.8 / 0.95 bands. */
export function PressurePage() {
  const { t, f } = useI18n();
  const { views, now } = useNodeViews('runtime');
  const { rangeSec } = useControls();
  useSeriesVersion();
  const [onlyPressured, setOnlyPressured] = useState(false);
  const [sort, setSort] = useState<PressureSort>('score');
  const scores = componentScores(views);
  const rows = pressureRows(views, { onlyPressured, sort });
  const components = [...new Set(views.flatMap((v) => Object.keys(v.top?.pressure?.component_scores ?? {})))].sort();
  const lines = views.flatMap((v, i) =>
    seriesStore.metrics(v.node.id, SCORE_PREFIX).map((m, k) => ({
      label: `${nodeLabel(v)} · ${m.slice(SCORE_PREFIX.length)}`,
      color: NODE_COLORS[(i * 3 + k) % NODE_COLORS.length]!,
      points: seriesStore.series(v.node.id, m),
    })),
  );
  return (
    <Stack gap="sm" data-page="pressure">
      <Group justify="space-between">
        <Title order={3}>{t('nav.pressure')}</Title>
        <Text size="xs" c="dimmed">
          {t('pressure.bands', { busy: PRESSURE_BANDS.busy, degraded: PRESSURE_BANDS.degraded, critical: PRESSURE_BANDS.critical })}
        </Text>
      </Group>
      {views
        .filter((v) => !v.top)
        .map((v) => (
          <Group key={v.node.id} gap="xs">
            <Text size="sm">
              <Raw>{nodeLabel(v)}</Raw>
            </Text>
            <StateNotice status={v.status} />
          </Group>
        ))}
      <SimpleGrid cols={{ base: 1, lg: 2 }} spacing="sm">
        <Card withBorder padding="sm" data-testid="component-scores">
          <Text fw={600} mb="xs">
            {t('pressure.componentScores')}
          </Text>
          <Stack gap={6}>
            {scores.length === 0 && (
              <Text size="sm" c="dimmed">
                {t('pressure.none')}
              </Text>
            )}
            {scores.map((s) => (
              <Group key={s.component} justify="space-between" wrap="nowrap" data-component={s.component} data-band={s.band}>
                <Group gap={6} wrap="nowrap" miw={220}>
                  <LevelBadge level={s.band} size="xs" />
                  <Text size="sm" ff="monospace">
                    <Raw>{s.component}</Raw>
                  </Text>
                  <Text size="xs" c="dimmed">
                    <Raw>{s.nodeName}</Raw>
                  </Text>
                </Group>
                <LimitBar fraction={s.score} label={f.num(s.score, 2).padStart(4, '\u2007')} width={260} />
              </Group>
            ))}
          </Stack>
          {components.length > 0 && (
            <>
              <Text size="xs" c="dimmed" mt="md" mb={4}>
                {t('pressure.heat')}
              </Text>
              <Table withRowBorders={false} verticalSpacing={2} data-testid="heat-strip">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th />
                    {components.map((c) => (
                      <Table.Th key={c}>
                        <Text size="xs" ff="monospace">
                          <Raw>{c}</Raw>
                        </Text>
                      </Table.Th>
                    ))}
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {views.map((v) => (
                    <Table.Tr key={v.node.id}>
                      <Table.Td>
                        <Text size="xs">
                          <Raw>{nodeLabel(v)}</Raw>
                        </Text>
                      </Table.Td>
                      {components.map((c) => {
                        const score = v.top?.pressure?.component_scores?.[c];
                        return (
                          <Table.Td key={c}>
                            <Tooltip label={score === undefined ? '–' : f.num(score, 3)}>
                              <div
                                className="heat-cell"
                                style={{
                                  background: score === undefined ? 'var(--mantine-color-default-border)' : bandVar(pressureBand(score)),
                                  opacity: score === undefined ? 0.4 : 0.35 + 0.65 * score,
                                }}
                              />
                            </Tooltip>
                          </Table.Td>
                        );
                      })}
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            </>
          )}
        </Card>
        <TimeSeriesChart
          title={t('pressure.scoreHistory')}
          lines={lines}
          format={(v) => f.num(v, 2)}
          rangeSec={rangeSec}
          now={now}
          since={seriesStore.collectingSince()}
          scoreBands
          height={230}
          testId="score-history"
        />
      </SimpleGrid>
      <Group gap="md">
        <Switch
          label={t('pressure.onlyPressured')}
          checked={onlyPressured}
          onChange={(e) => setOnlyPressured(e.currentTarget.checked)}
          data-testid="only-pressured"
        />
        <NativeSelect
          size="xs"
          aria-label={t('pressure.sort')}
          value={sort}
          onChange={(e) => setSort(e.currentTarget.value as PressureSort)}
          data={(['score', 'node', 'component'] as const).map((s) => ({ value: s, label: t(`pressure.sort.${s}` as MessageKey) }))}
        />
      </Group>
      <PressureTable rows={rows} />
    </Stack>
  );
}
