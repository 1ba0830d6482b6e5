import { Group, Text, Tooltip } from '@mantine/core';
import { Raw, useI18n } from '../../../i18n/i18n.tsx';
import { nodeLabel, type NodeView } from '../view-model.ts';

/** Where the numbers come from: each node's sample count and window, or that it is warming up; server notes on hover. */
export function SourcesNote({ views }: { views: NodeView[] }) {
  const { t } = useI18n();
  return (
    <Group gap="lg" data-testid="sources-note">
      {views.map((v) => {
        const s = v.top?.sources;
        const text = (
          <Text size="xs" c="dimmed">
            <Raw>{nodeLabel(v)}</Raw>:{' '}
            {v.status.kind === 'warming_up'
              ? t('sources.warmingUp')
              : s
                ? t('sources.samples', { n: s.collector.sample_count ?? 0, window: v.top!.window_seconds })
                : '–'}
          </Text>
        );
        const notes = s?.notes ?? [];
        return notes.length === 0 ? (
          <span key={v.node.id}>{text}</span>
        ) : (
          <Tooltip key={v.node.id} multiline maw={520} label={<Raw>{notes.join(' · ')}</Raw>}>
            {text}
          </Tooltip>
        );
      })}
    </Group>
  );
}
