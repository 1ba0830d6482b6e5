import { Badge, Button, Card, CopyButton, Group, Progress, ScrollArea, Stack, Text, TextInput } from '@mantine/core';
import { useEffect, useRef, useState } from 'react';
import type { RunRecord } from '@parley/shared';
import { useNow } from '../../app/use-now.ts';
import { Raw, useI18n } from '../../i18n/i18n.tsx';
import type { MessageKey } from '../../i18n/messages.ts';

const RUN_COLOR = { running: 'blue', succeeded: 'green', failed: 'red', cancelled: 'yellow', blocked: 'orange' } as const;

/** Lines shown at once; the filter searches all kept lines. */
const SHOWN = 400;

/**
 * A stage's stderr as it runs (or as it was kept): state, elapsed time, the
 * `n/m` progress the tool prints, and the lines, newest at the bottom, with
 * a filter and a copy button.
 */
export function RunLog({ run, lines, kept }: { run: RunRecord; lines: readonly string[]; kept?: string | undefined }) {
  const { t, f } = useI18n();
  const now = useNow(500);
  const [filter, setFilter] = useState('');
  const viewport = useRef<HTMLDivElement>(null);
  const shown = (filter ? lines.filter((l) => l.toLowerCase().includes(filter.toLowerCase())) : lines).slice(-SHOWN);
  useEffect(() => {
    viewport.current?.scrollTo({ top: viewport.current.scrollHeight });
  }, [lines.length]);
  const end = run.ended_at ? Date.parse(run.ended_at) : now;
  const elapsed = Math.max(0, end - Date.parse(run.started_at));
  // Exit 1 with a report of blockers (or an incomplete scan) is the stage's answer, not a crash.
  const state = run.state === 'failed' && (run.report_status === 'blocked' || run.report_status === 'incomplete') ? 'blocked' : run.state;
  const pct = run.progress ? (run.progress.done / run.progress.total) * 100 : run.state === 'running' ? 0 : 100;
  return (
    <Card withBorder padding="sm" data-testid="run-log" data-run-state={run.state}>
      <Group justify="space-between" mb={6}>
        <Group gap="xs">
          <Badge color={RUN_COLOR[state]} data-testid="run-state">
            {t(`mig.run.${state}` as MessageKey)}
          </Badge>
          <Text size="sm" className="num">
            {t('mig.run.elapsed', { s: f.num(elapsed / 1000, 1) })}
          </Text>
          {run.progress && (
            <Text size="sm" c="dimmed" className="num">
              {run.progress.done}/{run.progress.total}
            </Text>
          )}
          {run.exit_code !== undefined && (
            <Text size="sm" c="dimmed">
              {t('mig.run.exit', { code: String(run.exit_code ?? run.signal ?? '') })}
            </Text>
          )}
        </Group>
        <Group gap="xs">
          <TextInput
            size="xs"
            placeholder={t('mig.run.filter')}
            value={filter}
            onChange={(e) => setFilter(e.currentTarget.value)}
            w={180}
          />
          <CopyButton value={lines.join('\n')}>
            {({ copied, copy }) => (
              <Button size="xs" variant="default" onClick={copy}>
                {copied ? t('common.copied') : t('mig.copy')}
              </Button>
            )}
          </CopyButton>
        </Group>
      </Group>
      <Progress value={pct} animated={run.state === 'running'} color={RUN_COLOR[state]} size="sm" mb={6} />
      <ScrollArea h={200} viewportRef={viewport} type="auto" bg="var(--mantine-color-default-hover)">
        <Stack gap={0} p={6}>
          {shown.length === 0 && (
            <Text size="xs" c="dimmed">
              {run.state === 'running' || !kept ? (
                t('mig.run.noLines')
              ) : (
                <>
                  {t('mig.run.logKept')} <Raw>{kept}</Raw>
                </>
              )}
            </Text>
          )}
          {shown.map((l, i) => (
            <Text key={i} size="xs" ff="monospace" style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-all' }}>
              <Raw>{l}</Raw>
            </Text>
          ))}
        </Stack>
      </ScrollArea>
    </Card>
  );
}
