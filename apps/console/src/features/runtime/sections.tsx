import { Group, Stack, Table, Text } from '@mantine/core';
import type { TopSnapshot } from '@parley/shared';
import { LimitBar } from '../../components/limit-bar.tsx';
import { Raw, useI18n } from '../../i18n/i18n.tsx';
import { limitFraction } from '../pressure/view-model.ts';

function Row({ label, children }: { label: React.ReactNode; children: React.ReactNode }) {
  return (
    <Table.Tr>
      <Table.Th w="50%">
        <Text size="sm" c="dimmed">
          {label}
        </Text>
      </Table.Th>
      <Table.Td className="num">{children}</Table.Td>
    </Table.Tr>
  );
}

function Facts({ children }: { children: React.ReactNode }) {
  return (
    <Table withRowBorders={false} verticalSpacing={2}>
      <Table.Tbody>{children}</Table.Tbody>
    </Table>
  );
}

export function TrafficSection({ s }: { s: NonNullable<TopSnapshot['traffic']> }) {
  const { t, f } = useI18n();
  return (
    <Facts>
      <Row label={t('runtime.send')}>{f.rate(s.send_per_sec)}</Row>
      <Row label={t('runtime.sendack')}>{f.rate(s.sendack_per_sec)}</Row>
      <Row label={t('runtime.sendackErr')}>
        {f.rate(s.sendack_error_per_sec)} ({f.ratio(s.sendack_error_rate)})
      </Row>
      <Row label={t('runtime.append')}>{f.rate(s.append_per_sec)}</Row>
      <Row label={t('runtime.appendP50')}>{f.ms(s.append_p50_ms)}</Row>
      <Row label={t('runtime.appendP99')}>{f.ms(s.append_p99_ms)}</Row>
      <Row label={t('runtime.deliver')}>{f.rate(s.deliver_per_sec)}</Row>
      <Row label={t('runtime.fanout')}>{f.num(s.fanout_rate, 2)}</Row>
    </Facts>
  );
}

export function ChannelSection({ s }: { s: NonNullable<TopSnapshot['channelv2']> }) {
  const { t, f } = useI18n();
  const pools = Object.keys({ ...s.worker_queue_depth_by_pool, ...s.worker_capacity_by_pool }).sort();
  const stages = Object.entries(s.stage_p99_ms ?? {}).sort(([, a], [, b]) => b - a);
  const maxStage = Math.max(1e-9, ...stages.map(([, v]) => v));
  return (
    <Stack gap="xs">
      <Facts>
        <Row label={t('runtime.activeChannels')}>{f.int(s.active_total)}</Row>
        <Row label={t('runtime.leaderFollower')}>
          {f.int(s.active_leader)} / {f.int(s.active_follower)} / {f.int(s.follower_parked)}
        </Row>
        <Row label={t('runtime.mailbox')}>
          <LimitBar
            fraction={limitFraction(s.reactor_mailbox_depth_max, s.reactor_mailbox_capacity_max)}
            label={`${f.int(s.reactor_mailbox_depth_max)} / ${f.int(s.reactor_mailbox_capacity_max)}`}
          />
        </Row>
        <Row label={t('runtime.appendP99')}>{f.ms(s.append_p99_ms)}</Row>
        <Row label={t('runtime.hotStage')}>{s.hot_stage ? <Raw>{s.hot_stage}</Raw> : '–'}</Row>
      </Facts>
      {pools.length > 0 && (
        <Text size="sm" fw={600}>
          {t('runtime.workerQueues')}
        </Text>
      )}
      {pools.map((p) => (
        <Group key={p} justify="space-between" wrap="nowrap">
          <Text size="sm" ff="monospace">
            <Raw>{p}</Raw>
          </Text>
          <LimitBar
            fraction={limitFraction(s.worker_queue_depth_by_pool?.[p], s.worker_queue_capacity_by_pool?.[p])}
            label={`${f.int(s.worker_queue_depth_by_pool?.[p] ?? 0)} / ${f.int(s.worker_queue_capacity_by_pool?.[p] ?? 0)}`}
          />
        </Group>
      ))}
      {stages.length > 0 && (
        <Text size="sm" fw={600}>
          {t('runtime.stageP99')}
        </Text>
      )}
      {stages.map(([stage, ms]) => (
        <Group key={stage} justify="space-between" wrap="nowrap">
          <Text size="sm" ff="monospace">
            <Raw>{stage}</Raw>
          </Text>
          <Group gap={6} wrap="nowrap">
            <div className="limit-bar" style={{ width: 160 }}>
              <div className="limit-bar-fill" style={{ width: `${(ms / maxStage) * 100}%`, background: 'var(--mantine-color-blue-5)' }} />
            </div>
            <Text size="xs" className="num">
              {f.ms(ms)}
            </Text>
          </Group>
        </Group>
      ))}
    </Stack>
  );
}

export function StorageSection({ s }: { s: NonNullable<TopSnapshot['storage']> }) {
  const { t, f } = useI18n();
  const queues = s.commit_queues ?? [];
  if (queues.length === 0)
    return (
      <Text size="sm" c="dimmed">
        {t('runtime.noQueues')}
      </Text>
    );
  return (
    <Table verticalSpacing={4}>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>{t('runtime.store')}</Table.Th>
          <Table.Th>{t('pressure.depthCapacity')}</Table.Th>
          <Table.Th ta="right">{t('runtime.batchRecords')}</Table.Th>
          <Table.Th ta="right">{t('runtime.batchCommit')}</Table.Th>
          <Table.Th>{t('runtime.requestP99')}</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {queues.map((q) => (
          <Table.Tr key={q.store}>
            <Table.Td ff="monospace">
              <Raw>{q.store}</Raw>
            </Table.Td>
            <Table.Td>
              <LimitBar fraction={limitFraction(q.depth, q.capacity)} label={`${f.int(q.depth)} / ${f.int(q.capacity)}`} width={120} />
            </Table.Td>
            <Table.Td ta="right" className="num">
              {f.num(q.batch_records_p50, 1)}
            </Table.Td>
            <Table.Td ta="right" className="num">
              {f.ms(q.batch_commit_p99_ms)}
            </Table.Td>
            <Table.Td>
              {Object.entries(q.request_p99_ms_by_lane ?? {}).map(([lane, ms]) => (
                <Text key={lane} size="xs" className="num">
                  <Raw>{lane}</Raw>: {f.ms(ms)}
                </Text>
              ))}
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

export function DeliverySection({ s }: { s: NonNullable<TopSnapshot['delivery']> }) {
  const { t, f } = useI18n();
  return (
    <Facts>
      <Row label={t('runtime.push')}>{f.rate(s.push_per_sec)}</Row>
      <Row label={t('runtime.routes')}>{f.rate(s.routes_per_sec)}</Row>
      <Row label={t('runtime.pushP99')}>{f.ms(s.push_p99_ms)}</Row>
      <Row label={t('runtime.retryQueue')}>{f.int(s.retry_queue_depth)}</Row>
      <Row label={t('runtime.ackBindings')}>{f.int(s.ack_bindings)}</Row>
      <Row label={t('runtime.recipientQueue')}>
        <LimitBar
          fraction={limitFraction(s.recipient_queue_depth, s.recipient_queue_capacity)}
          label={`${f.bytes(s.recipient_queue_depth)} / ${f.bytes(s.recipient_queue_capacity)}`}
        />
      </Row>
      <Row label={t('runtime.errorRate')}>{f.ratio(s.error_rate)}</Row>
    </Facts>
  );
}
