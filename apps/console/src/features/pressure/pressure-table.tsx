import { Card, Table, Text } from '@mantine/core';
import { LevelBadge } from '../../components/badges.tsx';
import { LimitBar } from '../../components/limit-bar.tsx';
import { Raw, ServerText, useI18n } from '../../i18n/i18n.tsx';
import type { Format } from '../../lib/format.ts';
import type { TopPressureItem } from '@parley/shared';
import type { PressureRow } from './view-model.ts';

/** "depth / capacity", in bytes for queues that count bytes (their name ends in _bytes). */
function depthLabel(item: TopPressureItem, f: Format): string {
  const fmt = item.queue?.endsWith('_bytes') ? f.bytes : (n: number) => f.num(n, 0);
  return `${fmt(item.depth ?? 0)} / ${fmt(item.capacity ?? 0)}`;
}

/** Pressure items with depth drawn against capacity and inflight against workers. */
export function PressureTable({ rows, showNode = true }: { rows: PressureRow[]; showNode?: boolean }) {
  const { t, f } = useI18n();
  const opt = (v: number | undefined, fmt: (x: number) => string) => (v === undefined ? '–' : fmt(v));
  return (
    <Card withBorder padding={0}>
      <Table.ScrollContainer minWidth={1100} type="native">
        <Table verticalSpacing={6} striped data-testid="pressure-table">
          <Table.Thead>
            <Table.Tr>
              <Table.Th w={110}>{t('pressure.level')}</Table.Th>
              {showNode && <Table.Th>{t('pressure.node')}</Table.Th>}
              <Table.Th>{t('pressure.item')}</Table.Th>
              <Table.Th ta="right">{t('pressure.score')}</Table.Th>
              <Table.Th>{t('pressure.depthCapacity')}</Table.Th>
              <Table.Th>{t('pressure.inflightWorkers')}</Table.Th>
              <Table.Th ta="right">{t('pressure.waitP99')}</Table.Th>
              <Table.Th ta="right">{t('pressure.taskP99')}</Table.Th>
              <Table.Th ta="right">{t('pressure.admissionErr')}</Table.Th>
              <Table.Th>{t('pressure.hint')}</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {rows.length === 0 && (
              <Table.Tr>
                <Table.Td colSpan={10}>
                  <Text size="sm" c="dimmed">
                    {t('pressure.none')}
                  </Text>
                </Table.Td>
              </Table.Tr>
            )}
            {rows.map((r) => (
              <Table.Tr key={r.key} data-pressure-row={r.label} data-level={r.item.level}>
                <Table.Td>
                  <LevelBadge level={r.item.level} />
                </Table.Td>
                {showNode && (
                  <Table.Td style={{ whiteSpace: 'nowrap' }}>
                    <Raw>{r.nodeName}</Raw>
                  </Table.Td>
                )}
                <Table.Td>
                  <Text size="sm" ff="monospace">
                    <Raw>{r.label}</Raw>
                  </Text>
                  {(r.item.queue || r.item.priority) && (
                    <Text size="xs" c="dimmed" ff="monospace">
                      <Raw>{[r.item.queue, r.item.priority].filter(Boolean).join(' · ')}</Raw>
                    </Text>
                  )}
                </Table.Td>
                <Table.Td ta="right" className="num" data-col="score">
                  {f.num(r.item.score, 3)}
                </Table.Td>
                <Table.Td>
                  <LimitBar
                    fraction={r.depthFraction}
                    width={120}
                    label={r.depthFraction === undefined ? undefined : depthLabel(r.item, f)}
                  />
                </Table.Td>
                <Table.Td>
                  <LimitBar
                    fraction={r.inflightFraction}
                    width={120}
                    label={
                      r.inflightFraction === undefined ? undefined : `${f.num(r.item.inflight ?? 0, 2)} / ${f.num(r.item.workers ?? 0, 0)}`
                    }
                  />
                </Table.Td>
                <Table.Td ta="right" className="num">
                  {opt(r.item.wait_p99_ms, f.ms)}
                </Table.Td>
                <Table.Td ta="right" className="num">
                  {opt(r.item.task_p99_ms, f.ms)}
                </Table.Td>
                <Table.Td ta="right" className="num">
                  {opt(r.item.admission_error_per_sec, f.rate)}
                </Table.Td>
                <Table.Td>
                  {r.item.hint ? (
                    <Text size="xs">
                      <ServerText text={r.item.hint} />
                    </Text>
                  ) : (
                    '–'
                  )}
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
    </Card>
  );
}
