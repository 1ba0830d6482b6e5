import { Badge, Button, Group, Stack, Table, Text, TextInput } from '@mantine/core';
import { useState } from 'react';
import { DebugCluster, DebugConfig, DiagnosticsResult, type ConsoleNode } from '@parley/shared';
import { nodeStatus } from '../../api/node-status.ts';
import { StateNotice } from '../../components/state-notice.tsx';
import { Raw, useI18n } from '../../i18n/i18n.tsx';
import type { MessageKey } from '../../i18n/messages.ts';
import { useDebug } from './debug-query.ts';
import { TokenPrompt } from './token-prompt.tsx';
import { configPairs, eventRows, messageQuery } from './view-model.ts';

type DebugResult = ReturnType<typeof useDebug>;

/** The debug states every panel shares: disabled (404), token prompt (401), the rest as notices. */
function Gate({ node, q, children }: { node: ConsoleNode; q: DebugResult; children: React.ReactNode }) {
  const status = nodeStatus(q, Date.now(), 0);
  if (status.kind === 'unauthorized') return <TokenPrompt node={node} />;
  if (status.kind !== 'ok') return <StateNotice status={status} disabledKey="state.disabled.debug" />;
  return <>{children}</>;
}

function Refresh({ q }: { q: DebugResult }) {
  const { t } = useI18n();
  return (
    <Button size="xs" variant="default" onClick={() => void q.refetch()} loading={q.isFetching} w="fit-content">
      {t('controls.refreshNow')}
    </Button>
  );
}

export function ConfigPanel({ node }: { node: ConsoleNode }) {
  const { t } = useI18n();
  const q = useDebug(node, '/debug/config', DebugConfig, {});
  const c = q.data;
  return (
    <Gate node={node} q={q}>
      {c && (
        <Stack gap="xs" data-testid="debug-config">
          <Refresh q={q} />
          <Group gap="lg">
            <Text size="sm">
              {t('diag.nodeId')}: <b className="num">{c.node_id}</b>
            </Text>
            <Text size="sm">
              {t('diag.dataDir')}: <Raw>{c.node_data_dir}</Raw>
            </Text>
            <Text size="sm">
              {t('diag.apiListen')}: <Raw>{c.api_listen}</Raw>
            </Text>
          </Group>
          <Table striped withTableBorder verticalSpacing={3} data-testid="config-values">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('diag.key')}</Table.Th>
                <Table.Th>{t('diag.value')}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {configPairs(c).map(([k, v]) => (
                <Table.Tr key={k} data-config-key={k}>
                  <Table.Td ff="monospace">
                    <Raw>{k}</Raw>
                  </Table.Td>
                  <Table.Td ff="monospace">
                    <Raw>{v}</Raw>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Stack>
      )}
    </Gate>
  );
}

export function ClusterPanel({ node }: { node: ConsoleNode }) {
  const { t } = useI18n();
  const q = useDebug(node, '/debug/cluster', DebugCluster, {});
  const c = q.data;
  return (
    <Gate node={node} q={q}>
      {c && (
        <Stack gap="xs" data-testid="debug-cluster">
          <Refresh q={q} />
          <Text size="sm">
            {t('diag.nodeId')}: <b className="num">{c.node_id}</b> · {t('diag.stateRevision')}: <b className="num">{c.state_revision}</b>
          </Text>
          {c.slots.length === 0 ? (
            <Text size="sm" c="dimmed">
              {t('diag.noSlots')}
            </Text>
          ) : (
            <Table striped withTableBorder verticalSpacing={3}>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>{t('diag.slot')}</Table.Th>
                  <Table.Th>{t('diag.leader')}</Table.Th>
                  <Table.Th>{t('diag.replicas')}</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {c.slots.map((s) => (
                  <Table.Tr key={s.slot_id}>
                    <Table.Td className="num">{s.slot_id}</Table.Td>
                    <Table.Td className="num">{s.leader_id}</Table.Td>
                    <Table.Td className="num">{s.replicas.join(', ')}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          )}
        </Stack>
      )}
    </Gate>
  );
}

/** A diagnostics result: status, slowest/error stage, events newest first. */
function ResultView({ r }: { r: DiagnosticsResult }) {
  const { t, f } = useI18n();
  const rows = eventRows(r);
  return (
    <Stack gap="xs">
      <Group gap="md">
        <Badge
          color={r.status === 'ok' ? 'green' : r.status === 'not_found' ? 'gray' : 'orange'}
          tt="none"
          data-testid="lookup-status"
          data-status={r.status}
        >
          {['ok', 'error', 'partial', 'not_found'].includes(r.status) ? t(`diag.status.${r.status}` as MessageKey) : <Raw>{r.status}</Raw>}
        </Badge>
        {r.summary.slowest_stage && (
          <Text size="sm">
            {t('diag.slowest')}: <Raw>{r.summary.slowest_stage}</Raw> ({f.ms(r.summary.slowest_duration_ms ?? 0)})
          </Text>
        )}
        {r.summary.error_stage && (
          <Text size="sm" c="red">
            {t('diag.errorStage')}:{' '}
            <Raw>
              {r.summary.error_stage} {r.summary.error_code ?? ''}
            </Raw>
          </Text>
        )}
        <Text size="sm" c="dimmed">
          {t('diag.events', { n: rows.length })}
        </Text>
      </Group>
      <Table striped withTableBorder verticalSpacing={3} data-testid="debug-events">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>{t('diag.at')}</Table.Th>
            <Table.Th>{t('diag.stage')}</Table.Th>
            <Table.Th>{t('diag.result')}</Table.Th>
            <Table.Th ta="right">{t('diag.duration')}</Table.Th>
            <Table.Th>{t('diag.channel')}</Table.Th>
            <Table.Th>{t('diag.message')}</Table.Th>
            <Table.Th ta="right">{t('diag.records')}</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.slice(0, 200).map((e, i) => (
            <Table.Tr key={`${e.at}|${i}`}>
              <Table.Td className="num">{f.time(Date.parse(e.at))}</Table.Td>
              <Table.Td ff="monospace">
                <Raw>{e.stage}</Raw>
              </Table.Td>
              <Table.Td>
                <Badge size="xs" color={e.result === 'ok' ? 'green' : 'red'} variant="light">
                  <Raw>{e.result}</Raw>
                </Badge>
              </Table.Td>
              <Table.Td ta="right" className="num">
                {e.durationMs === undefined ? '–' : f.ms(e.durationMs)}
              </Table.Td>
              <Table.Td ff="monospace">
                <Raw>{e.channel_key ?? '–'}</Raw>
              </Table.Td>
              <Table.Td ff="monospace">
                <Raw>{e.client_msg_no ?? (e.message_seq !== undefined ? `#${e.message_seq}` : '–')}</Raw>
              </Table.Td>
              <Table.Td ta="right" className="num">
                {e.record_count ?? '–'}
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Stack>
  );
}

export function EventsPanel({ node }: { node: ConsoleNode }) {
  const q = useDebug(node, '/debug/diagnostics/events', DiagnosticsResult, { limit: '100' });
  return (
    <Gate node={node} q={q}>
      {q.data && (
        <Stack gap="xs" data-testid="debug-events-panel">
          <Refresh q={q} />
          <ResultView r={q.data} />
        </Stack>
      )}
    </Gate>
  );
}

export function LookupPanel({ node, kind }: { node: ConsoleNode; kind: 'message' | 'trace' }) {
  const { t } = useI18n();
  const [form, setForm] = useState({ clientMsgNo: '', channelKey: '', messageSeq: '', traceId: '' });
  const [submitted, setSubmitted] = useState<{ path: string; query: Record<string, string> }>();
  const [formError, setFormError] = useState<string>();
  const q = useDebug(node, submitted?.path ?? '/debug/diagnostics/message', DiagnosticsResult, submitted?.query);
  const submit = () => {
    setFormError(undefined);
    if (kind === 'trace') {
      const id = form.traceId.trim();
      if (!/^[A-Za-z0-9_~.-]{1,128}$/.test(id)) return setFormError(t('diag.badTraceId'));
      return setSubmitted({ path: `/debug/diagnostics/trace/${id}`, query: {} });
    }
    const mq = messageQuery(form);
    if ('error' in mq) return setFormError(t('diag.oneSelector'));
    setSubmitted({ path: '/debug/diagnostics/message', query: mq });
  };
  return (
    <Stack gap="sm">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        <Group align="flex-end">
          {kind === 'trace' ? (
            <TextInput
              label={t('diag.traceId')}
              value={form.traceId}
              onChange={(e) => setForm({ ...form, traceId: e.currentTarget.value })}
              w={320}
            />
          ) : (
            <>
              <TextInput
                label={t('diag.clientMsgNo')}
                value={form.clientMsgNo}
                onChange={(e) => setForm({ ...form, clientMsgNo: e.currentTarget.value })}
              />
              <Text size="sm" pb={8}>
                {t('diag.or')}
              </Text>
              <TextInput
                label={t('diag.channelKey')}
                placeholder="1&alice"
                value={form.channelKey}
                onChange={(e) => setForm({ ...form, channelKey: e.currentTarget.value })}
              />
              <TextInput
                label={t('diag.messageSeq')}
                value={form.messageSeq}
                onChange={(e) => setForm({ ...form, messageSeq: e.currentTarget.value })}
                w={120}
              />
            </>
          )}
          <Button type="submit">{t('diag.lookup')}</Button>
        </Group>
      </form>
      {formError && (
        <Text size="sm" c="red">
          {formError}
        </Text>
      )}
      {submitted && (
        <Gate node={node} q={q}>
          {q.data && <ResultView r={q.data} />}
        </Gate>
      )}
    </Stack>
  );
}
