import { SimpleGrid } from '@mantine/core';
import { useMemo } from 'react';
import { useSeriesVersion, seriesStore } from '../../../app/series.ts';
import { NODE_COLORS } from '../../../components/levels.ts';
import { TimeSeriesChart } from '../../../components/time-series-chart.tsx';
import { useI18n } from '../../../i18n/i18n.tsx';
import type { MessageKey } from '../../../i18n/messages.ts';
import { METRIC_UNITS, TREND_METRICS, type TrendMetric } from '../../../lib/series-store.ts';

export interface TrendNode {
  id: string;
  label: string;
}

/** Byte axis steps: 1, 2, 4 … 512 of KiB, MiB and GiB. */
const BYTE_INCRS = [1024, 1024 ** 2, 1024 ** 3].flatMap((unit) => [1, 2, 4, 8, 16, 32, 64, 128, 256, 512].map((m) => m * unit));

/** Count axis steps: whole numbers only. */
const COUNT_INCRS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000, 1_000_000];

const TITLES: Record<TrendMetric, MessageKey> = {
  send: 'chart.send',
  sendack: 'chart.sendack',
  deliver: 'chart.deliver',
  append_p99: 'chart.appendP99',
  connections: 'chart.connections',
  cpu: 'chart.cpu',
  rss: 'chart.rss',
};

/** The overview's trend charts: one line per node, from the client-side history. */
export function TrendGrid({ nodes, rangeSec, now, cols = 4 }: { nodes: TrendNode[]; rangeSec: number; now: number; cols?: number }) {
  const { t, f } = useI18n();
  const version = useSeriesVersion();
  const formats = useMemo(() => ({ rate: f.rate, ms: f.ms, count: f.int, percent: f.percent, bytes: f.bytes }), [f]);
  return (
    <SimpleGrid cols={{ base: 1, md: 2, xl: cols }} spacing="sm" data-testid="trend-grid" data-version={version}>
      {TREND_METRICS.map((m) => (
        <TimeSeriesChart
          key={m}
          testId={`chart-${m}`}
          title={t(TITLES[m])}
          format={formats[METRIC_UNITS[m]]}
          {...(METRIC_UNITS[m] === 'bytes' ? { incrs: BYTE_INCRS } : METRIC_UNITS[m] === 'count' ? { incrs: COUNT_INCRS } : {})}
          rangeSec={rangeSec}
          now={now}
          since={seriesStore.collectingSince()}
          lines={nodes.map((n, i) => ({
            label: n.label,
            color: NODE_COLORS[i % NODE_COLORS.length]!,
            points: seriesStore.series(n.id, m),
          }))}
        />
      ))}
    </SimpleGrid>
  );
}
