import { Card, Group, SimpleGrid, Stack, Tabs, Text, Title } from '@mantine/core';
import { useNavigate, useParams } from 'react-router';
import { useNodeViews } from '../../api/node-views.ts';
import { ReachBadge, StaleMark } from '../../components/badges.tsx';
import { StateNotice } from '../../components/state-notice.tsx';
import { Raw, useI18n } from '../../i18n/i18n.tsx';
import type { MessageKey } from '../../i18n/messages.ts';
import { nodeLabel, reachability, type NodeView } from '../overview/view-model.ts';
import { ChannelSection, DeliverySection, StorageSection, TrafficSection } from './sections.tsx';

export const RUNTIME_TABS = ['traffic', 'channel', 'storage', 'delivery'] as const;
type RuntimeTab = (typeof RUNTIME_TABS)[number];

function Section({ tab, v }: { tab: RuntimeTab; v: NodeView }) {
  const { t } = useI18n();
  const top = v.top;
  if (!top) return <StateNotice status={v.status} />;
  const s = tab === 'traffic' ? top.traffic : tab === 'channel' ? top.channelv2 : tab === 'storage' ? top.storage : top.delivery;
  if (!s)
    return (
      <Text size="sm" c="dimmed">
        {t('runtime.sectionMissing')}
      </Text>
    );
  if (tab === 'traffic') return <TrafficSection s={top.traffic!} />;
  if (tab === 'channel') return <ChannelSection s={top.channelv2!} />;
  if (tab === 'storage') return <StorageSection s={top.storage!} />;
  return <DeliverySection s={top.delivery!} />;
}

/** `/runtime/:view`: traffic, channel, storage and delivery, one card per node. */
export function RuntimePage() {
  const { t } = useI18n();
  const navigate = useNavigate();
  const param = useParams().view;
  const tab: RuntimeTab = (RUNTIME_TABS as readonly string[]).includes(param ?? '') ? (param as RuntimeTab) : 'traffic';
  const { views } = useNodeViews(tab, { everyMs: 5000 });
  return (
    <Stack gap="sm" data-page="runtime" data-tab={tab}>
      <Title order={3}>{t('nav.runtime')}</Title>
      <Tabs value={tab} onChange={(v) => v && navigate(`/runtime/${v}`)}>
        <Tabs.List>
          {RUNTIME_TABS.map((x) => (
            <Tabs.Tab key={x} value={x} data-tab={x}>
              {t(`runtime.tab.${x}` as MessageKey)}
            </Tabs.Tab>
          ))}
        </Tabs.List>
      </Tabs>
      <SimpleGrid cols={{ base: 1, lg: 2 }} spacing="sm">
        {views.map((v) => (
          <Card key={v.node.id} withBorder padding="sm" data-runtime-node={v.node.id}>
            <Group gap="xs" mb="xs">
              <Text fw={600}>
                <Raw>{nodeLabel(v)}</Raw>
              </Text>
              <ReachBadge kind={reachability(v)} detail={v.status.detail} />
              <StaleMark status={v.status} />
            </Group>
            <Section tab={tab} v={v} />
          </Card>
        ))}
      </SimpleGrid>
    </Stack>
  );
}
