import { Anchor, Card, Group, Stack, Text } from '@mantine/core';
import { Link } from 'react-router';
import { SeverityBadge } from '../../../components/badges.tsx';
import { Raw, ServerText, useI18n } from '../../../i18n/i18n.tsx';
import { normaliseSeverity } from '@parley/shared';
import { activeAlerts, type NodeView } from '../view-model.ts';

/** The first five active alerts in triage order; links to Alerts. */
export function ActiveAlertsCard({ views }: { views: NodeView[] }) {
  const { t, f } = useI18n();
  const alerts = activeAlerts(views, 5);
  const total = views.reduce((n, v) => n + (v.top?.alerts.counts.active ?? 0), 0);
  return (
    <Card withBorder padding="sm" h="100%" data-testid="active-alerts">
      <Group justify="space-between" mb="xs">
        <Text fw={600}>
          {t('overview.activeAlerts')}{' '}
          <Text span c="dimmed">
            ({f.int(total)})
          </Text>
        </Text>
        <Anchor component={Link} to="/alerts" size="sm">
          {t('overview.allAlerts')}
        </Anchor>
      </Group>
      <Stack gap={6}>
        {alerts.length === 0 && (
          <Text size="sm" c="dimmed">
            {t('overview.noActiveAlerts')}
          </Text>
        )}
        {alerts.map((a) => (
          <Group key={`${a.nodeId}|${a.id}`} gap={6} wrap="nowrap" data-alert={a.kind}>
            <SeverityBadge level={normaliseSeverity(a.severity)} />
            <Text size="sm" truncate>
              <ServerText text={a.message} />
            </Text>
            <Text size="xs" c="dimmed">
              <Raw>{a.nodeName}</Raw>
            </Text>
          </Group>
        ))}
      </Stack>
    </Card>
  );
}
