import { Card, Group, NativeSelect, SegmentedControl, Stack, Table, Text, Title } from '@mantine/core';
import { useState } from 'react';
import { useNodeViews } from '../../api/node-views.ts';
import { SeverityBadge } from '../../components/badges.tsx';
import { Raw, ServerText, useI18n } from '../../i18n/i18n.tsx';
import type { MessageKey } from '../../i18n/messages.ts';
import { AlertDrawer } from './alert-drawer.tsx';
import { alertFacets, collectAlerts, filterAlerts, NO_FILTER, type AlertFilter, type AlertState } from './view-model.ts';

/** `/alerts`: active and recent alerts of every node, filtered, with an evidence drawer. */
export function AlertsPage() {
  const { t, f } = useI18n();
  const { views, now } = useNodeViews('overview');
  const [filter, setFilter] = useState<AlertFilter>(NO_FILTER);
  const [openKey, setOpenKey] = useState<string>();
  const rows = collectAlerts(views);
  const facets = alertFacets(rows);
  const shown = filterAlerts(rows, filter);
  const open = rows.find((r) => r.key === openKey);
  const age = (s: string) => Math.max(0, Math.round((now - Date.parse(s)) / 1000));
  return (
    <Stack gap="sm" data-page="alerts">
      <Title order={3}>{t('nav.alerts')}</Title>
      <Group gap="sm" data-testid="alert-filters">
        <SegmentedControl
          size="xs"
          value={filter.state}
          onChange={(v) => setFilter({ ...filter, state: v as AlertState })}
          data={(['all', 'active', 'recent'] as const).map((s) => ({ value: s, label: t(`alerts.state.${s}` as MessageKey) }))}
        />
        <NativeSelect
          size="xs"
          aria-label={t('alerts.node')}
          value={filter.node}
          onChange={(e) => setFilter({ ...filter, node: e.currentTarget.value })}
          data={[{ value: '', label: t('alerts.anyNode') }, ...facets.nodes.map((n) => ({ value: n.id, label: n.name }))]}
        />
        <NativeSelect
          size="xs"
          aria-label={t('alerts.severity')}
          value={filter.severity}
          onChange={(e) => setFilter({ ...filter, severity: e.currentTarget.value })}
          data={[
            { value: '', label: t('alerts.anySeverity') },
            ...facets.severities.map((s) => ({
              value: s,
              label: ['warning', 'error', 'critical'].includes(s) ? t(`severity.${s}` as MessageKey) : s,
            })),
          ]}
        />
        <NativeSelect
          size="xs"
          aria-label={t('alerts.component')}
          value={filter.component}
          onChange={(e) => setFilter({ ...filter, component: e.currentTarget.value })}
          data={[{ value: '', label: t('alerts.anyComponent') }, ...facets.components.map((c) => ({ value: c, label: c }))]}
        />
        <Text size="xs" c="dimmed">
          {t('alerts.shown', { n: shown.length, total: rows.length })}
        </Text>
      </Group>
      <Card withBorder padding={0}>
        <Table highlightOnHover verticalSpacing={6} data-testid="alert-table">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>{t('alerts.severity')}</Table.Th>
              <Table.Th>{t('alerts.node')}</Table.Th>
              <Table.Th>{t('alerts.stateCol')}</Table.Th>
              <Table.Th ta="right">{t('alerts.age')}</Table.Th>
              <Table.Th ta="right">{t('alerts.count')}</Table.Th>
              <Table.Th>{t('alerts.message')}</Table.Th>
              <Table.Th>{t('alerts.hint')}</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {shown.length === 0 && (
              <Table.Tr>
                <Table.Td colSpan={7}>
                  <Text size="sm" c="dimmed">
                    {rows.length === 0 ? t('alerts.none') : t('alerts.noneMatch')}
                  </Text>
                </Table.Td>
              </Table.Tr>
            )}
            {shown.map((r) => (
              <Table.Tr
                key={r.key}
                className="clickable"
                onClick={() => setOpenKey(r.key)}
                data-alert-row={r.kind}
                data-node={r.nodeId}
                data-active={r.active ? 'true' : 'false'}
              >
                <Table.Td>
                  <SeverityBadge level={r.level} />
                </Table.Td>
                <Table.Td>
                  <Raw>{r.nodeName}</Raw>
                </Table.Td>
                <Table.Td>{r.active ? t('alerts.active') : t('alerts.resolved')}</Table.Td>
                <Table.Td ta="right" className="num">
                  {t('unit.seconds', { n: f.int(age(r.first_seen)) })}
                </Table.Td>
                <Table.Td ta="right" className="num">
                  {f.int(r.count)}
                </Table.Td>
                <Table.Td>
                  <ServerText text={r.message} />
                </Table.Td>
                <Table.Td>{r.hint ? <ServerText text={r.hint} /> : '–'}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Card>
      <AlertDrawer row={open} onClose={() => setOpenKey(undefined)} />
    </Stack>
  );
}
