import { Card, Table, Text } from '@mantine/core';
import { LevelBadge } from '../../components/badges.tsx';
import { LimitBar } from '../../components/limit-bar.tsx';
import { Raw, ServerText, useI18n } from '../../i18n/i18n.tsx';
import type { PressureRow } from './view-model.ts';

/** Pressure items with depth drawn against capacity and inflight against workers. */
export function PressureTable({ rows, showNode = true }: { rows: PressureRow[]; showNode?: boolean }) {
  const { t, f } = useI18n();
  const opt = (v: number | undefined, fmt: (x: number) => string) => (v === undefined ? '–' : fmt(v));
  return (
    <Card withBorder padding={0}>
      <Table verticalSpacing={6} striped data-testid="pressure-table">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>{t('pressure.level')}</Table.Th>
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
              <Table.Td miw={96}><LevelBadge level={r.item.level} /></Table.Td>
              {showNode && <Table.Td style={{ whiteSpace: 'nowrap' }}><Raw>{r.nodeName}</Raw></Table.Td>}
              <Table.Td>
                <Text size="sm" ff="monospace"><Raw>{r.label}</Raw></Text>
                {(r.item.queue || r.item.priority) && (
                  <Text size="xs" c="dimmed" ff="monospace"><Raw>{[r.item.queue, r.item.priority].filter(Boolean).join(' · ')}</Raw></Text>
                )}
              </Table.Td>
              <Table.Td ta="right" className="num" data-col="score">{f.num(r.item.score, 3)}</Table.Td>
              <Table.Td>
                <LimitBar fraction={r.depthFraction} label={r.depthFraction === undefined ? undefined : `${f.num(r.item.depth ?? 0, 0)} / ${f.num(r.item.capacity ?? 0, 0)}`} />
              </Table.Td>
              <Table.Td>
                <LimitBar fraction={r.inflightFraction} label={r.inflightFraction === undefined ? undefined : `${f.num(r.item.inflight ?? 0, 2)} / ${f.num(r.item.workers ?? 0, 0)}`} />
              </Table.Td>
              <Table.Td ta="right" className="num">{opt(r.item.wait_p99_ms, f.ms)}</Table.Td>
              <Table.Td ta="right" className="num">{opt(r.item.task_p99_ms, f.ms)}</Table.Td>
              <Table.Td ta="right" className="num">{opt(r.item.admission_error_per_sec, f.rate)}</Table.Td>
              <Table.Td>{r.item.hint ? <Text size="xs"><ServerText text={r.item.hint} /></Text> : '–'}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Card>
  );
}
