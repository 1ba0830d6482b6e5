import { Badge, Card, Group, List, Stack, Text, Tooltip } from '@mantine/core';
import { Link } from 'react-router';
import { ReachBadge } from '../../../components/badges.tsx';
import { levelColor, reachColor } from '../../../components/levels.ts';
import { Raw, ServerText, useI18n } from '../../../i18n/i18n.tsx';
import type { MessageKey } from '../../../i18n/messages.ts';
import { nodeLabel, reachability, rollup, type NodeView } from '../view-model.ts';

/**
 * The first thing on the screen: the worst node verdict, readable from across
 * the room, ready N/M, and each node's reachability. Nodes the console cannot
 * see are named in a red line of their own, never folded into the verdict;
 * so are members the cluster itself reports gone (`clusterGone`, from
 * `/debug/cluster`), which the console may not poll at all.
 */
export function VerdictHero({
  views,
  actions,
  clusterGone = [],
}: {
  views: NodeView[];
  actions?: React.ReactNode;
  clusterGone?: string[];
}) {
  const { t } = useI18n();
  const r = rollup(views);
  const allReady = r.total > 0 && r.ready === r.total;
  // The accent turns red when a node is down or not ready, or a cluster member is gone, whatever the reachable nodes say.
  const healthy = (allReady || r.total === 0) && clusterGone.length === 0;
  const color = `var(--mantine-color-${healthy ? levelColor(r.level) : 'red'}-6)`;
  const verdictColor = `var(--mantine-color-${levelColor(r.level)}-6)`;
  return (
    <Card
      withBorder
      padding="md"
      className="verdict-hero"
      style={{ ['--verdict-color' as string]: color }}
      data-testid="verdict-hero"
      data-level={r.level}
    >
      <Group justify="space-between" align="flex-start" wrap="nowrap">
        <Stack gap={4}>
          <Text size="xs" c="dimmed" tt="uppercase" fw={700}>
            {t('overview.verdict')}
          </Text>
          <Group gap="md" align="center">
            <div className="verdict-word" data-testid="verdict-level" style={{ color: verdictColor }}>
              {t(`level.${['ok', 'busy', 'degraded', 'critical', 'unknown'].includes(r.level) ? r.level : 'unknown'}` as MessageKey)}
            </div>
            {r.unreachable.length > 0 && (
              <Badge size="xl" color="red" variant="filled" data-testid="nodes-down">
                {t('overview.nodesUnreachable', { n: r.unreachable.length })}
              </Badge>
            )}
            {clusterGone.length > 0 && (
              <Badge size="xl" color="red" variant="filled" data-testid="cluster-nodes-gone">
                {t('overview.clusterNodesGone', { n: clusterGone.length })}
              </Badge>
            )}
          </Group>
          <Text size="md" data-testid="verdict-summary">
            {r.summary ? <ServerText text={r.summary} /> : t('overview.noCurrentData')}
            {r.summary && r.current < r.total && (
              <Text span c="dimmed" size="sm">
                {' · '}
                {t('overview.verdictOf', { n: r.current, total: r.total })}
              </Text>
            )}
          </Text>
          {clusterGone.length > 0 && (
            <Text size="sm" c="red" fw={600} data-testid="cluster-gone-line">
              {t('overview.clusterGoneLine', { names: clusterGone.join(', ') })}
            </Text>
          )}
          {r.reasons.length > 0 && (
            <List size="sm" spacing={0} data-testid="verdict-reasons">
              {r.reasons.slice(0, 6).map((x, i) => (
                <List.Item key={i}>
                  <Raw>{x.node}</Raw>: <ServerText text={x.text} />
                </List.Item>
              ))}
            </List>
          )}
        </Stack>
        <Stack gap="xs" align="flex-end">
          <Group gap="xs">
            <Text size="sm" c="dimmed">
              {t('overview.ready')}
            </Text>
            <Badge size="xl" color={allReady ? 'green' : 'red'} variant="filled" data-testid="ready-count">
              {r.ready}/{r.total}
            </Badge>
          </Group>
          <Group gap="sm" data-testid="node-dots">
            {views.map((v) => {
              const reach = reachability(v);
              return (
                <Tooltip key={v.node.id} label={t(`reach.${reach}` as MessageKey)}>
                  <Link to={`/nodes/${v.node.id}`} className="node-dot-link" data-node-dot={v.node.id} data-reach={reach}>
                    <span className="node-dot" style={{ background: `var(--mantine-color-${reachColor(reach)}-6)` }} />
                    <Text size="sm" span>
                      <Raw>{nodeLabel(v)}</Raw>
                    </Text>
                  </Link>
                </Tooltip>
              );
            })}
          </Group>
          {actions}
        </Stack>
      </Group>
      {r.unreachable.length > 0 && (
        <Group gap="xs" mt="sm" data-testid="unreachable-line">
          {r.unreachable.map((v) => (
            <Group key={v.node.id} gap={4}>
              <ReachBadge kind={reachability(v)} />
              <Text size="sm">
                <Raw>{nodeLabel(v)}</Raw>
              </Text>
              <Text size="sm" c="dimmed">
                {v.status.ageMs !== undefined
                  ? t('overview.lastDataAge', { age: Math.round(v.status.ageMs / 1000) })
                  : t('overview.neverSeen')}
              </Text>
            </Group>
          ))}
        </Group>
      )}
    </Card>
  );
}
