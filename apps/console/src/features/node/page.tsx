import { Badge, Card, Group, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { useParams } from 'react-router';
import { useNodeViews } from '../../api/node-views.ts';
import { nodeStatus } from '../../api/node-status.ts';
import { useHealth } from '../../api/queries.ts';
import { useControls } from '../../app/controls.ts';
import { LevelBadge, ReachBadge, StaleMark } from '../../components/badges.tsx';
import { StateNotice } from '../../components/state-notice.tsx';
import { Raw, ServerText, useI18n } from '../../i18n/i18n.tsx';
import { TrendGrid } from '../overview/components/trend-grid.tsx';
import { nodeLabel, reachability } from '../overview/view-model.ts';
import { PressureTable } from '../pressure/pressure-table.tsx';
import { pressureRows } from '../pressure/view-model.ts';
import { protocolRows, readinessParts } from './view-model.ts';

function Fact({ label, value, testId }: { label: React.ReactNode; value: React.ReactNode; testId?: string }) {
  return (
    <Table.Tr>
      <Table.Th w="45%">
        <Text size="sm" c="dimmed">
          {label}
        </Text>
      </Table.Th>
      <Table.Td className="num" data-testid={testId}>
        {value}
      </Table.Td>
    </Table.Tr>
  );
}

/** `/nodes/:id`: one node in depth — readiness, health, resources, clients, pressure, charts. */
export function NodePage() {
  const { id } = useParams();
  const { t, f } = useI18n();
  const { views, now } = useNodeViews('all', { everyMs: 5000, only: id ?? '' });
  const { rangeSec } = useControls();
  const v = views.find((x) => x.node.id === id);
  const health = useHealth(v?.node);
  if (!v) {
    return (
      <Stack data-page="node">
        <Title order={3}>{t('node.unknown')}</Title>
        <Text c="dimmed">
          <Raw>{id}</Raw>
        </Text>
      </Stack>
    );
  }
  const top = v.top;
  const healthStatus = nodeStatus(health, now, 0);
  const parts = readinessParts(v.ready, top);
  return (
    <Stack gap="sm" data-page="node">
      <Group gap="sm">
        <Title order={3}>
          <Raw>{nodeLabel(v)}</Raw>
        </Title>
        <ReachBadge kind={reachability(v)} detail={v.status.detail} />
        {top && <LevelBadge level={top.verdict.level} />}
        <StaleMark status={v.status} />
        <Text size="sm" c="dimmed">
          <Raw>{v.node.url}</Raw>
        </Text>
      </Group>
      {!top && <StateNotice status={v.status} />}
      {top && (
        <Text size="sm">
          <ServerText text={top.verdict.summary} />
          {(top.verdict.reasons ?? []).map((r) => (
            <span key={r}>
              {' '}
              · <ServerText text={r} />
            </span>
          ))}
        </Text>
      )}
      <SimpleGrid cols={{ base: 1, md: 3 }} spacing="sm">
        <Card withBorder padding="sm" data-testid="readiness-panel">
          <Text fw={600} mb="xs">
            {t('node.readiness')}
          </Text>
          <Group gap="xs" mb="xs">
            <Text size="sm">/readyz</Text>
            {v.ready ? (
              <Badge color={v.ready.ready ? 'green' : 'red'} data-testid="readyz-state">
                {v.ready.ready ? t('reach.ready') : t('reach.not_ready')}
              </Badge>
            ) : (
              <StateNotice status={v.readyStatus ?? { kind: 'loading', stale: false }} />
            )}
          </Group>
          {v.ready?.reason && (
            <Text size="sm" c="red">
              <ServerText text={v.ready.reason} />
            </Text>
          )}
          <Group gap={6} data-testid="ready-parts">
            {parts.map(([part, up]) => (
              <Badge key={part} tt="none" variant="light" color={up ? 'green' : 'red'} data-part={part} data-up={up}>
                <Raw>{part}</Raw>: {up ? t('node.partUp') : t('node.partDown')}
              </Badge>
            ))}
          </Group>
          <Group gap="xs" mt="sm">
            <Text size="sm">/healthz</Text>
            {health.data ? (
              <Badge color="green" data-testid="healthz-state">
                {t('node.healthOk')}
              </Badge>
            ) : (
              <StateNotice status={healthStatus} />
            )}
          </Group>
        </Card>
        <Card withBorder padding="sm" data-testid="resources-panel">
          <Text fw={600} mb="xs">
            {t('node.resources')}
          </Text>
          <Table withRowBorders={false} verticalSpacing={2}>
            <Table.Tbody>
              <Fact label={t('node.cpu')} value={top ? f.percent(top.resources.cpu_percent) : '–'} />
              <Fact label={t('node.rss')} value={top ? f.bytes(top.resources.memory_rss_bytes) : '–'} />
              <Fact label={t('node.vms')} value={top ? f.bytes(top.resources.memory_vms_bytes) : '–'} />
              <Fact label={t('node.handles')} value={top ? f.int(top.resources.goroutines) : '–'} />
              <Fact label={t('node.threads')} value={top ? f.int(top.resources.threads) : '–'} />
              <Fact label={t('node.window')} value={top ? t('unit.seconds', { n: top.window_seconds }) : '–'} />
            </Table.Tbody>
          </Table>
        </Card>
        <Card withBorder padding="sm" data-testid="clients-panel">
          <Text fw={600} mb="xs">
            {t('node.clients')}
          </Text>
          <Table withRowBorders={false} verticalSpacing={2}>
            <Table.Tbody>
              <Fact label={t('node.connections')} value={top?.clients ? f.int(top.clients.connections) : '–'} testId="node-connections" />
              {protocolRows(top).map(([p, n]) => (
                <Fact key={p} label={<Raw>· {p}</Raw>} value={f.int(n)} />
              ))}
              <Fact label={t('node.authFail')} value={top?.clients ? f.rate(top.clients.auth_fail_per_sec) : '–'} />
              <Fact label={t('node.closes')} value={top?.clients ? f.rate(top.clients.close_per_sec) : '–'} />
            </Table.Tbody>
          </Table>
        </Card>
      </SimpleGrid>
      <Text fw={600}>{t('node.pressure')}</Text>
      <PressureTable rows={pressureRows([v], { onlyPressured: false, sort: 'score' })} showNode={false} />
      <TrendGrid nodes={[{ id: v.node.id, label: nodeLabel(v) }]} rangeSec={rangeSec} now={now} />
    </Stack>
  );
}
