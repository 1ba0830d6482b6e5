import { Accordion, Alert, Badge, Box, Button, Card, Checkbox, Group, Modal, ScrollArea, Stack, Table, Text } from '@mantine/core';
import { useMemo, useState } from 'react';
import type { PlanDetail } from '@parley/shared';
import { Raw, useI18n } from '../../i18n/i18n.tsx';
import { usePlatform } from '../../platform/context.tsx';
import { useRefreshMigration, useSelectedPlan, useMigrationState, value } from './api.ts';
import { alreadyApplied, applyResolution, describeChanges, foldDiff, planDiff, type Change, type PatchOp } from './model/resolution.ts';

interface Finding {
  code: string;
  detail: string;
  node_id?: number;
  shard?: number;
  channel_id?: string;
  channel_type?: number;
  message_seq?: number;
  uid?: string;
  resolution?: { patch: PatchOp[]; sentence: string };
}

function where(b: Finding): string {
  const parts: string[] = [];
  if (b.node_id !== undefined) parts.push(`node ${b.node_id}`);
  if (b.shard !== undefined) parts.push(`shard ${b.shard}`);
  if (b.channel_id !== undefined) parts.push(`${b.channel_id}/${b.channel_type ?? '?'}`);
  if (b.message_seq !== undefined) parts.push(`seq ${b.message_seq}`);
  if (b.uid !== undefined) parts.push(`uid ${b.uid}`);
  return parts.join(' · ');
}

/** A plan change of a card: a member and its value, or a list entry with its fields pre-filled from the finding. */
function ChangeView({ c }: { c: Change }) {
  const { t } = useI18n();
  if (c.kind === 'remove')
    return (
      <Text size="xs" ff="monospace">
        <Raw>− {c.path}</Raw>
      </Text>
    );
  if (c.kind === 'set')
    return (
      <Text size="xs" ff="monospace" data-change={c.path}>
        <Raw>
          {c.path} = {JSON.stringify(c.value)}
        </Raw>
      </Text>
    );
  const entry = (c.entry ?? {}) as Record<string, unknown>;
  return (
    <Box data-change={c.path}>
      <Text size="xs" c="dimmed">
        {t('mig.blocker.entry')} <Raw>{c.path}[]</Raw>
      </Text>
      <Table fz="xs" verticalSpacing={0} withRowBorders={false}>
        <Table.Tbody>
          {Object.entries(entry).map(([k, v]) => (
            <Table.Tr key={k}>
              <Table.Td w={140} c="dimmed">
                <Raw>{k}</Raw>
              </Table.Td>
              <Table.Td ff="monospace" style={{ wordBreak: 'break-all' }}>
                <Raw>{typeof v === 'string' ? v : JSON.stringify(v)}</Raw>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Box>
  );
}

function FindingCard({
  b,
  index,
  plan,
  picked,
  toggle,
  kind,
}: {
  b: Finding;
  index: number;
  plan: unknown;
  picked: boolean;
  toggle: () => void;
  kind: 'blocker' | 'warning';
}) {
  const { t } = useI18n();
  const patch = b.resolution?.patch ?? [];
  const inPlan = alreadyApplied(plan, patch);
  return (
    <Card withBorder padding="sm" data-testid={`${kind}-${index}`} data-code={b.code} data-picked={picked} data-in-plan={inPlan}>
      <Group justify="space-between" align="flex-start" wrap="nowrap">
        <Stack gap={4} style={{ flex: 1, minWidth: 0 }}>
          <Group gap="xs">
            <Badge color={kind === 'blocker' ? 'orange' : 'gray'} tt="none">
              <Raw>{b.code}</Raw>
            </Badge>
            <Text size="xs" c="dimmed" ff="monospace">
              <Raw>{where(b)}</Raw>
            </Text>
          </Group>
          <Text size="sm">
            <Raw>{b.detail}</Raw>
          </Text>
          {b.resolution && (
            <Stack gap={4} mt={4}>
              <Text size="xs" fw={600}>
                {t('mig.blocker.resolution')}
              </Text>
              <Text size="xs" c="dimmed" lang="en">
                <Raw>{b.resolution.sentence}</Raw>
              </Text>
              {describeChanges(patch).map((c, i) => (
                <ChangeView key={i} c={c} />
              ))}
            </Stack>
          )}
        </Stack>
        <Stack gap={4} align="flex-end" miw={170}>
          {patch.length === 0 ? (
            <Badge color="red" variant="light">
              {t('mig.blocker.noMember')}
            </Badge>
          ) : inPlan ? (
            <Badge color="green" variant="light">
              {t('mig.blocker.inPlan')}
            </Badge>
          ) : (
            <Checkbox label={t('mig.blocker.accept')} checked={picked} onChange={toggle} data-testid={`accept-${kind}-${index}`} />
          )}
        </Stack>
      </Group>
    </Card>
  );
}

/**
 * The blockers of a prepare or diagnose report as cards, each offering the
 * plan change its `resolution` names (quarantine entries pre-filled from the
 * row the blocker found, policy members), and the warnings that carry an
 * optional one. Accepting shows the plan diff and saves a new plan: a new
 * folder, so every stage starts afresh (seed rule 5).
 */
export function Blockers({ report, detail }: { report: Record<string, unknown>; detail: PlanDetail }) {
  const { t } = useI18n();
  const { host } = usePlatform();
  const refresh = useRefreshMigration();
  const state = useMigrationState();
  const [, select] = useSelectedPlan(state.data);
  const blockers = (Array.isArray(report.blockers) ? report.blockers : []) as Finding[];
  const warnings = ((Array.isArray(report.warnings) ? report.warnings : []) as Finding[]).filter(
    (w) => (w.resolution?.patch.length ?? 0) > 0,
  );
  const [picked, setPicked] = useState<Set<string>>(new Set());
  const [review, setReview] = useState(false);
  const [error, setError] = useState<string>();
  const all = useMemo(
    () => [...blockers.map((b, i) => [`b${i}`, b] as const), ...warnings.map((w, i) => [`w${i}`, w] as const)],
    [blockers, warnings],
  );
  const next = useMemo(
    () => all.filter(([k]) => picked.has(k)).reduce<unknown>((p, [, f]) => applyResolution(p, f.resolution?.patch ?? []), detail.plan),
    [all, picked, detail.plan],
  );
  if (blockers.length === 0 && warnings.length === 0) return null;
  const toggle = (k: string) =>
    setPicked((s) => {
      const n = new Set(s);
      if (n.has(k)) n.delete(k);
      else n.add(k);
      return n;
    });
  const open = blockers
    .map((b, i) => [`b${i}`, b] as const)
    .filter(([, b]) => (b.resolution?.patch.length ?? 0) > 0 && !alreadyApplied(detail.plan, b.resolution!.patch));
  const save = async () => {
    setError(undefined);
    try {
      const s = value(await host.migration.savePlan({ plan: next, based_on: detail.summary.id }));
      setReview(false);
      setPicked(new Set());
      select(s.id);
      await refresh();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const diff = foldDiff(planDiff(detail.plan, next));
  return (
    <Stack gap="xs" data-testid="blockers">
      <Group justify="space-between">
        <Text fw={600}>{blockers.length > 0 ? t('mig.blocker.title', { n: blockers.length }) : t('mig.blocker.noneTitle')}</Text>
        <Group gap="xs">
          {open.length > 0 && (
            <Button
              size="xs"
              variant="subtle"
              onClick={() => setPicked(new Set([...picked, ...open.map(([k]) => k)]))}
              data-testid="accept-all"
            >
              {t('mig.blocker.acceptAll')}
            </Button>
          )}
          <Button size="sm" disabled={picked.size === 0} onClick={() => setReview(true)} data-testid="review-changes">
            {t('mig.blocker.review', { n: picked.size })}
          </Button>
        </Group>
      </Group>
      {blockers.map((b, i) => (
        <FindingCard
          key={`b${i}`}
          b={b}
          index={i}
          plan={detail.plan}
          picked={picked.has(`b${i}`)}
          toggle={() => toggle(`b${i}`)}
          kind="blocker"
        />
      ))}
      {warnings.length > 0 && (
        <Accordion variant="contained">
          <Accordion.Item value="w">
            <Accordion.Control>
              <Text size="sm">{t('mig.blocker.optional', { n: warnings.length })}</Text>
            </Accordion.Control>
            <Accordion.Panel>
              <Stack gap="xs">
                {warnings.map((w, i) => (
                  <FindingCard
                    key={`w${i}`}
                    b={w}
                    index={i}
                    plan={detail.plan}
                    picked={picked.has(`w${i}`)}
                    toggle={() => toggle(`w${i}`)}
                    kind="warning"
                  />
                ))}
              </Stack>
            </Accordion.Panel>
          </Accordion.Item>
        </Accordion>
      )}
      <Modal
        opened={review}
        onClose={() => setReview(false)}
        title={t('mig.blocker.diffTitle', { id: detail.summary.id })}
        size="xl"
        data-testid="diff-modal"
      >
        <Text size="sm" c="dimmed" mb="xs">
          {t('mig.blocker.diffHint')}
        </Text>
        <ScrollArea h={420} type="auto">
          <Box ff="monospace" fz={12} data-testid="plan-diff">
            {diff.map((l, i) =>
              l.kind === 'fold' ? (
                <Text key={i} size="xs" c="dimmed" fs="italic">
                  {t('mig.blocker.folded', { n: l.count })}
                </Text>
              ) : (
                <Box
                  key={i}
                  data-diff={l.kind}
                  style={{
                    whiteSpace: 'pre',
                    background:
                      l.kind === 'add'
                        ? 'var(--mantine-color-green-light)'
                        : l.kind === 'del'
                          ? 'var(--mantine-color-red-light)'
                          : undefined,
                  }}
                >
                  <Raw>{`${l.kind === 'add' ? '+' : l.kind === 'del' ? '−' : ' '} ${l.text}`}</Raw>
                </Box>
              ),
            )}
          </Box>
        </ScrollArea>
        {error && (
          <Alert color="red" mt="xs">
            <Raw>{error}</Raw>
          </Alert>
        )}
        <Group justify="flex-end" mt="sm">
          <Button variant="default" onClick={() => setReview(false)}>
            {t('common.close')}
          </Button>
          <Button onClick={() => void save()} data-testid="save-new-plan">
            {t('mig.blocker.saveNew')}
          </Button>
        </Group>
      </Modal>
    </Stack>
  );
}
