import { Group, Text } from '@mantine/core';
import { Raw, useI18n } from '../../../i18n/i18n.tsx';
import { nodeLabel, type NodeView } from '../view-model.ts';

/** Where the numbers come from: each node's sample count and window, warming-up nodes, server notes. */
export function SourcesNote({ views }: { views: NodeView[] }) {
  const { t } = useI18n();
  return (
    <Group gap="lg" data-testid="sources-note">
      {views.map((v) => {
        const s = v.top?.sources;
        return (
          <Text key={v.node.id} size="xs" c="dimmed">
            <Raw>{nodeLabel(v)}</Raw>:{' '}
            {v.status.kind === 'warming_up'
              ? t('sources.warmingUp')
              : s
                ? t('sources.samples', { n: s.collector.sample_count ?? 0, window: v.top!.window_seconds })
                : '–'}
            {(s?.notes ?? []).map((note) => (
              <span key={note}>
                {' · '}
                <Raw>{note}</Raw>
              </span>
            ))}
          </Text>
        );
      })}
    </Group>
  );
}
