import { Anchor, Card, Group, Stack, Text } from '@mantine/core';
import { Link } from 'react-router';
import { LevelBadge } from '../../../components/badges.tsx';
import { LimitBar } from '../../../components/limit-bar.tsx';
import { Raw, useI18n } from '../../../i18n/i18n.tsx';
import { hotPressure, pressureLabel, type NodeView } from '../view-model.ts';

/** The five highest pressure scores across nodes, each against the bands; links to Pressure. */
export function HotPressureCard({ views }: { views: NodeView[] }) {
  const { t, f } = useI18n();
  const items = hotPressure(views, 5);
  return (
    <Card withBorder padding="sm" h="100%" data-testid="hot-pressure">
      <Group justify="space-between" mb="xs">
        <Text fw={600}>{t('overview.hotPressure')}</Text>
        <Anchor component={Link} to="/pressure" size="sm">
          {t('overview.allPressure')}
        </Anchor>
      </Group>
      <Stack gap={6}>
        {items.length === 0 && (
          <Text size="sm" c="dimmed">
            {t('overview.noPressureData')}
          </Text>
        )}
        {items.map((h) => (
          <Group
            key={`${h.nodeId}|${pressureLabel(h.item)}|${h.item.queue}`}
            justify="space-between"
            wrap="nowrap"
            data-hot-item={pressureLabel(h.item)}
            data-level={h.item.level}
          >
            <Group gap={6} wrap="nowrap">
              <LevelBadge level={h.item.level} size="xs" />
              <Text size="sm" ff="monospace">
                <Raw>{pressureLabel(h.item)}</Raw>
              </Text>
              <Text size="xs" c="dimmed">
                <Raw>{h.nodeName}</Raw>
              </Text>
            </Group>
            <LimitBar fraction={h.item.score} label={f.num(h.item.score, 2)} width={120} />
          </Group>
        ))}
      </Stack>
    </Card>
  );
}
