import { Card, Group, Text } from '@mantine/core';
import { useComputedColorScheme } from '@mantine/core';
import { useEffect, useMemo, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { PRESSURE_BANDS } from '@parley/shared';
import { Raw, useI18n } from '../i18n/i18n.tsx';
import { alignSeries, type Point } from '../lib/series-store.ts';

export interface ChartLine {
  label: string;
  color: string;
  points: Point[];
}

export interface TimeSeriesChartProps {
  title: string;
  lines: ChartLine[];
  /** Formats a value with its unit (axis and legend). */
  format: (v: number) => string;
  /** Chart range, seconds back from `now`. */
  rangeSec: number;
  now: number;
  /** When the history began (seconds), for "collecting since". */
  since?: number | undefined;
  /** A 0..1 score chart: y fixed to 0..1 with the 0.6/0.8/0.95 band lines. */
  scoreBands?: boolean;
  /** Tick steps of the value axis (bytes use powers of two, so ticks land on whole MiB). */
  incrs?: number[];
  height?: number;
  testId?: string;
}

const BAND_COLORS = ['#fab005', '#fd7e14', '#fa5252'];
const AXIS_FONT = '11px system-ui, sans-serif';

/**
 * uPlot wrapped for React: created once per set of lines, fed with setData
 * on new points, sized by a ResizeObserver, destroyed on unmount. The
 * legend is HTML (node name and last value), so it is readable, translatable
 * and testable; the canvas only draws.
 */
export function TimeSeriesChart({
  title,
  lines,
  format,
  rangeSec,
  now,
  since,
  scoreBands,
  incrs,
  height = 150,
  testId,
}: TimeSeriesChartProps) {
  const { t, f } = useI18n();
  const scheme = useComputedColorScheme('light');
  const el = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  // While the history is shorter than the range, the axis starts where it does, so lines fill the chart.
  const fromSec = Math.max(now / 1000 - rangeSec, Math.min(since ?? -Infinity, now / 1000 - 10));
  const data = useMemo(
    () =>
      alignSeries(
        lines.map((l) => l.points),
        fromSec,
      ) as uPlot.AlignedData,
    [lines, fromSec],
  );
  // The clock ticks once a second; a sample newer than it must still be inside the axis (and the y auto-range).
  const toSec = Math.max(now / 1000, data[0][data[0].length - 1] ?? 0);
  const range = useRef({ from: fromSec, to: toSec });
  range.current = { from: fromSec, to: toSec };
  // Formatters read through refs: a new function identity must not rebuild the chart.
  const fmt = useRef({ value: format, time: f.time });
  fmt.current = { value: format, time: f.time };
  const shape = lines.map((l) => `${l.label}:${l.color}`).join('|');

  useEffect(() => {
    const host = el.current;
    if (!host) return;
    const axis = scheme === 'dark' ? '#909296' : '#495057';
    const grid = scheme === 'dark' ? '#373a40' : '#e9ecef';
    const opts: uPlot.Options = {
      width: Math.max(200, host.clientWidth),
      height,
      legend: { show: false },
      cursor: { drag: { x: false, y: false } },
      scales: {
        x: { time: true, range: () => [range.current.from, range.current.to] },
        y: scoreBands
          ? { auto: false, range: [0, 1] }
          : { auto: true, range: (_u, min, max) => [Math.min(0, min ?? 0), max > 0 ? max * 1.15 : 1] },
      },
      axes: [
        {
          stroke: axis,
          font: AXIS_FONT,
          grid: { stroke: grid, width: 1 },
          ticks: { stroke: grid },
          values: (_u, splits) => splits.map((s) => fmt.current.time(s * 1000)),
          space: 70,
        },
        {
          stroke: axis,
          font: AXIS_FONT,
          grid: { stroke: grid, width: 1 },
          ticks: { stroke: grid },
          values: (_u, splits) => splits.map((s) => fmt.current.value(s)),
          size: 84,
          ...(incrs ? { incrs } : {}),
        },
      ],
      series: [{}, ...lines.map((l) => ({ label: l.label, stroke: l.color, width: 1.5, spanGaps: true, points: { show: false } }))],
      hooks: scoreBands
        ? {
            drawAxes: [
              (u: uPlot) => {
                const ctx = u.ctx;
                ctx.save();
                Object.values(PRESSURE_BANDS).forEach((b, i) => {
                  const y = u.valToPos(b, 'y', true);
                  ctx.strokeStyle = BAND_COLORS[i]!;
                  ctx.setLineDash([4, 4]);
                  ctx.beginPath();
                  ctx.moveTo(u.bbox.left, y);
                  ctx.lineTo(u.bbox.left + u.bbox.width, y);
                  ctx.stroke();
                });
                ctx.restore();
              },
            ],
          }
        : {},
    };
    const p = new uPlot(opts, data, host);
    plot.current = p;
    const ro = new ResizeObserver(() => p.setSize({ width: Math.max(200, host.clientWidth), height }));
    ro.observe(host);
    return () => {
      ro.disconnect();
      p.destroy();
      plot.current = null;
    };
    // Recreated only when the set of lines, the theme or the kind changes; data flows through setData.
  }, [shape, scheme, height, scoreBands, incrs]);

  useEffect(() => {
    plot.current?.setData(data);
  }, [data]);

  const hasPoints = lines.some((l) => l.points.length > 0);
  const full = since !== undefined && now / 1000 - since >= rangeSec;
  return (
    <Card
      withBorder
      padding="xs"
      data-testid={testId}
      className="chart-card"
      data-points={Math.max(0, ...lines.map((l) => l.points.length))}
    >
      <Group justify="space-between" gap={4} mb={2}>
        <Text size="sm" fw={600}>
          {title}
        </Text>
        {!full && (
          <Text size="xs" c="dimmed">
            {since === undefined ? t('chart.waiting') : t('chart.collectingSince', { time: f.time(since * 1000) })}
          </Text>
        )}
      </Group>
      <div ref={el} className="chart-canvas" style={{ height, opacity: hasPoints ? 1 : 0.35 }} />
      <Group gap="md" mt={4} className="chart-legend">
        {lines.map((l) => {
          const last = l.points[l.points.length - 1];
          return (
            <Group key={l.label} gap={4} wrap="nowrap" data-legend={l.label}>
              <span className="legend-swatch" style={{ background: l.color }} />
              <Text size="xs">
                <Raw>{l.label}</Raw>
              </Text>
              <Text size="xs" ff="monospace" className="num" data-legend-value>
                {last ? format(last.v) : '–'}
              </Text>
            </Group>
          );
        })}
      </Group>
    </Card>
  );
}
