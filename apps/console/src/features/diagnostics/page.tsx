import { Group, NativeSelect, Stack, Tabs, Text, Title } from '@mantine/core';
import { useState } from 'react';
import { useVisibleNodes } from '../../api/queries.ts';
import { useNodeName } from '../../app/node-names.ts';
import { useI18n } from '../../i18n/i18n.tsx';
import { ClusterPanel, ConfigPanel, EventsPanel, LookupPanel } from './panels.tsx';

/**
 * `/diagnostics`: the node's `/debug/*` routes, when it answers them — the
 * effective config, cluster view, recent events and message / trace lookups.
 * A node without the debug API says so; one with a token asks for it.
 */
export function DiagnosticsPage() {
  const { t } = useI18n();
  const { nodes } = useVisibleNodes();
  const nameOf = useNodeName();
  const [picked, setPicked] = useState<string>();
  const [tab, setTab] = useState<string>('config');
  const node = nodes.find((n) => n.id === picked) ?? nodes[0];
  return (
    <Stack gap="sm" data-page="diagnostics">
      <Group justify="space-between">
        <Title order={3}>{t('nav.diagnostics')}</Title>
        <NativeSelect
          size="sm"
          aria-label={t('diag.node')}
          data-testid="diag-node"
          value={node?.id ?? ''}
          onChange={(e) => setPicked(e.currentTarget.value)}
          data={nodes.map((n) => ({ value: n.id, label: nameOf(n) }))}
        />
      </Group>
      <Text size="sm" c="dimmed">
        {t('diag.intro')}
      </Text>
      {!node ? (
        <Text c="dimmed">{t('overview.noNodes')}</Text>
      ) : (
        <Tabs value={tab} onChange={(v) => v && setTab(v)} keepMounted={false}>
          <Tabs.List>
            <Tabs.Tab value="config">{t('diag.tab.config')}</Tabs.Tab>
            <Tabs.Tab value="cluster">{t('diag.tab.cluster')}</Tabs.Tab>
            <Tabs.Tab value="events">{t('diag.tab.events')}</Tabs.Tab>
            <Tabs.Tab value="message">{t('diag.tab.message')}</Tabs.Tab>
            <Tabs.Tab value="trace">{t('diag.tab.trace')}</Tabs.Tab>
          </Tabs.List>
          <Stack pt="sm" key={node.id}>
            {tab === 'config' && <ConfigPanel node={node} />}
            {tab === 'cluster' && <ClusterPanel node={node} />}
            {tab === 'events' && <EventsPanel node={node} />}
            {tab === 'message' && <LookupPanel node={node} kind="message" />}
            {tab === 'trace' && <LookupPanel node={node} kind="trace" />}
          </Stack>
        </Tabs>
      )}
    </Stack>
  );
}
