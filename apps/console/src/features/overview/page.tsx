import { Button, Grid, Stack } from '@mantine/core';
import { useNodeViews } from '../../api/node-views.ts';
import { useControls } from '../../app/controls.ts';
import { useI18n } from '../../i18n/i18n.tsx';
import { downloadSnapshots } from '../snapshots/download.ts';
import { ActiveAlertsCard } from './components/active-alerts.tsx';
import { ClusterCard, useClusterMap } from './components/cluster-card.tsx';
import { HotPressureCard } from './components/hot-pressure.tsx';
import { NodeTable } from './components/node-table.tsx';
import { SourcesNote } from './components/sources-note.tsx';
import { TrendGrid } from './components/trend-grid.tsx';
import { VerdictHero } from './components/verdict-hero.tsx';
import { clusterSource, goneMembers } from './cluster-model.ts';
import { nodeLabel } from './view-model.ts';

/** `/overview`: the cluster verdict and where the pressure is. */
export function OverviewPage() {
  const { t } = useI18n();
  const { views, now, nodesQuery } = useNodeViews('overview');
  const { rangeSec } = useControls();
  // The same query as the cluster card's (one request): members the cluster itself reports gone.
  const clusterMap = useClusterMap(clusterSource(views));
  const gone = clusterMap.data ? goneMembers(clusterMap.data) : [];
  return (
    <Stack gap="sm" data-page="overview">
      <VerdictHero
        views={views}
        clusterGone={gone}
        actions={
          <Button
            size="xs"
            variant="default"
            onClick={() => downloadSnapshots(views, now)}
            disabled={!views.some((v) => v.top)}
            data-testid="export-snapshot"
          >
            {t('overview.exportSnapshot')}
          </Button>
        }
      />
      <NodeTable views={views} />
      <ClusterCard views={views} configured={nodesQuery.data ?? []} />
      <Grid gap="sm">
        <Grid.Col span={{ base: 12, md: 6 }}>
          <HotPressureCard views={views} />
        </Grid.Col>
        <Grid.Col span={{ base: 12, md: 6 }}>
          <ActiveAlertsCard views={views} />
        </Grid.Col>
      </Grid>
      <TrendGrid nodes={views.map((v) => ({ id: v.node.id, label: nodeLabel(v) }))} rangeSec={rangeSec} now={now} />
      <SourcesNote views={views} />
    </Stack>
  );
}
