import { Card, Group, Table, Text } from '@mantine/core';
import { useNavigate } from 'react-router';
import { LevelBadge, ReachBadge, StaleMark } from '../../../components/badges.tsx';
import { levelColor } from '../../../components/levels.ts';
import { Raw, useI18n } from '../../../i18n/i18n.tsx';
import { nodeRow, type NodeView } from '../view-model.ts';

/** One row per node, wkcli's columns; a stale row is greyed with its age, a click opens the node. */
export function NodeTable({ views, readOnly }: { views: NodeView[]; readOnly?: boolean }) {
  const { t, f } = useI18n();
  const navigate = useNavigate();
  const dash = '–';
  const n = (v: number | undefined, fmt: (x: number) => string) => (v === undefined ? dash : fmt(v));
  return (
    <Card withBorder padding={0}>
      <Table striped highlightOnHover verticalSpacing={6} horizontalSpacing="sm" data-testid="node-table">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>{t('col.node')}</Table.Th>
            <Table.Th>{t('col.state')}</Table.Th>
            <Table.Th>{t('col.verdict')}</Table.Th>
            <Table.Th ta="right">{t('col.conn')}</Table.Th>
            <Table.Th ta="right">{t('col.cpu')}</Table.Th>
            <Table.Th ta="right">{t('col.rss')}</Table.Th>
            <Table.Th ta="right">{t('col.send')}</Table.Th>
            <Table.Th ta="right">{t('col.ack')}</Table.Th>
            <Table.Th ta="right">{t('col.appendP99')}</Table.Th>
            <Table.Th ta="right">{t('col.errRate')}</Table.Th>
            <Table.Th>{t('col.topPressure')}</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {views.length === 0 && (
            <Table.Tr>
              <Table.Td colSpan={11}>
                <Text size="sm" c="dimmed">
                  {t('overview.noNodes')}
                </Text>
              </Table.Td>
            </Table.Tr>
          )}
          {views.map((v) => {
            const r = nodeRow(v);
            return (
              <Table.Tr
                key={r.id}
                className={`${r.stale ? 'stale-row' : ''} ${readOnly ? '' : 'clickable'}`}
                onClick={readOnly ? undefined : () => navigate(`/nodes/${r.id}`)}
                data-node-row={r.id}
                data-reach={r.reach}
                data-stale={r.stale ? 'true' : 'false'}
              >
                <Table.Td>
                  <Text size="sm" fw={600}>
                    <Raw>{r.name}</Raw>
                  </Text>
                  <Text size="xs" c="dimmed">
                    <Raw>{r.url}</Raw>
                  </Text>
                </Table.Td>
                <Table.Td>
                  <Group gap={4} wrap="nowrap">
                    <ReachBadge kind={r.reach} detail={v.status.detail} />
                    {r.topState === 'disabled' && (
                      <Text size="xs" c="dimmed">
                        {t('overview.readinessOnly')}
                      </Text>
                    )}
                    {r.topState === 'warming_up' && r.reach !== 'warming_up' && (
                      <Text size="xs" c="blue" data-top-state="warming_up">
                        {t('reach.warming_up')}
                      </Text>
                    )}
                  </Group>
                  {r.stale && <StaleMark status={{ stale: true, ageMs: r.ageMs }} />}
                </Table.Td>
                <Table.Td>{r.verdict ? <LevelBadge level={r.verdict} /> : dash}</Table.Td>
                <Table.Td ta="right" className="num" data-col="conn">
                  {n(r.connections, f.int)}
                </Table.Td>
                <Table.Td ta="right" className="num" data-col="cpu">
                  {n(r.cpuPercent, f.percent)}
                </Table.Td>
                <Table.Td ta="right" className="num" data-col="rss">
                  {n(r.rssBytes, f.bytes)}
                </Table.Td>
                <Table.Td ta="right" className="num" data-col="send">
                  {n(r.sendPerSec, f.rate)}
                </Table.Td>
                <Table.Td ta="right" className="num" data-col="ack">
                  {n(r.ackPerSec, f.rate)}
                </Table.Td>
                <Table.Td ta="right" className="num" data-col="append">
                  {n(r.appendP99Ms, f.ms)}
                </Table.Td>
                <Table.Td ta="right" className="num" data-col="err">
                  {n(r.errorRate, f.ratio)}
                </Table.Td>
                <Table.Td>
                  {r.topPressure ? (
                    <Group gap={4} wrap="nowrap">
                      <Text size="sm" c={`${levelColor(r.topPressure.level)}.7`} fw={600} className="num">
                        {f.num(r.topPressure.score, 2)}
                      </Text>
                      <Text size="xs" ff="monospace">
                        <Raw>{r.topPressure.label}</Raw>
                      </Text>
                    </Group>
                  ) : (
                    dash
                  )}
                </Table.Td>
              </Table.Tr>
            );
          })}
        </Table.Tbody>
      </Table>
    </Card>
  );
}
