import { Badge, Card, Group, Stack, Table, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { DebugCluster, openSchema, type ConsoleNode } from '@parley/shared';
import { nodeStatus } from '../../../api/node-status.ts';
import { readReply } from '../../../api/ops.ts';
import { pollInterval, useControls } from '../../../app/controls.ts';
import { StateNotice } from '../../../components/state-notice.tsx';
import { Raw, useI18n } from '../../../i18n/i18n.tsx';
import { usePlatform } from '../../../platform/context.tsx';
import { clusterSource, clusterSummary } from '../cluster-model.ts';
import type { NodeView } from '../view-model.ts';

const ClusterReading = openSchema(DebugCluster);

/** `/debug/cluster` of one node, every 5 s (or the refresh interval when slower). */
export function useClusterMap(node: ConsoleNode | undefined) {
  const { host } = usePlatform();
  const controls = useControls();
  const interval = pollInterval(controls);
  return useQuery({
    queryKey: ['cluster', node?.id],
    enabled: node !== undefined,
    queryFn: async () => readReply('debug', await host.ops.get({ node: node!.id, path: '/debug/cluster' }), ClusterReading),
    refetchInterval: interval === false ? false : Math.max(interval, 5000),
    retry: false,
  });
}

/**
 * Every node of the cluster, as one of its nodes reports it (`/debug/cluster`),
 * including nodes the console does not poll: id, name, API address, live,
 * slots held, and the slot map's summary. Shown only for cluster nodes.
 */
export function ClusterCard({ views, configured }: { views: NodeView[]; configured: readonly ConsoleNode[] }) {
  const { t } = useI18n();
  const source = clusterSource(views);
  const q = useClusterMap(source);
  if (!source) return null;
  const status = nodeStatus(q, Date.now(), 0);
  const s = q.data && clusterSummary(q.data, configured);
  return (
    <Card withBorder padding="sm" data-testid="cluster-card">
      <Stack gap="xs">
        <Group justify="space-between">
          <Text fw={600}>{t('cluster.title')}</Text>
          {s && (
            <Text size="xs" c="dimmed" data-testid="cluster-summary">
              {t('cluster.summary', {
                id: s.clusterId,
                leader: s.controllerLeader ?? '–',
                revision: s.stateRevision,
                slots: s.slotCount,
                hash: s.hashSlotCount,
              })}
            </Text>
          )}
        </Group>
        {!s && <StateNotice status={status} disabledKey="state.disabled.debug" />}
        {s && s.unowned > 0 && (
          <Text size="sm" c="orange" data-testid="cluster-unowned">
            {t('cluster.unowned', { n: s.unowned })}
          </Text>
        )}
        {s && (
          <Table striped verticalSpacing={4} data-testid="cluster-members">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('cluster.node')}</Table.Th>
                <Table.Th>{t('cluster.api')}</Table.Th>
                <Table.Th>{t('cluster.state')}</Table.Th>
                <Table.Th ta="right">{t('cluster.slots')}</Table.Th>
                <Table.Th>{t('cluster.inConsole')}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {s.members.map((m) => (
                <Table.Tr key={m.id} data-cluster-member={m.id} data-live={m.live ? 'true' : 'false'}>
                  <Table.Td>
                    <Text size="sm" fw={600}>
                      <Raw>{`${m.id} · ${m.name}`}</Raw>
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <Text size="xs" ff="monospace">
                      <Raw>{m.api || '–'}</Raw>
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <Badge color={m.live ? 'green' : 'red'} variant="light" tt="none">
                      {m.live ? t('cluster.live') : t('cluster.gone')}
                    </Badge>
                    {m.id === s.controllerLeader && (
                      <Badge ml={4} color="blue" variant="light" tt="none">
                        {t('cluster.leader')}
                      </Badge>
                    )}
                  </Table.Td>
                  <Table.Td ta="right" className="num" data-col="slots" title={m.slots.join(', ')}>
                    {m.slots.length}
                  </Table.Td>
                  <Table.Td>
                    <Text size="xs" c={m.consoleNodeId ? undefined : 'dimmed'}>
                      {m.consoleNodeId ? t('cluster.polled') : t('cluster.notPolled')}
                    </Text>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
      </Stack>
    </Card>
  );
}
