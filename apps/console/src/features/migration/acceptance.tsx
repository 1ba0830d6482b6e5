import { Alert, Button, Card, Grid, Group, SegmentedControl, Stack, Table, Text, TextInput } from '@mantine/core';
import { useState } from 'react';
import type { AcceptanceNode, MigrationState, Plan, PlanDetail } from '@parley/shared';
import { Raw, useI18n } from '../../i18n/i18n.tsx';
import { mono } from './plan-fields.tsx';
import type { MessageKey } from '../../i18n/messages.ts';
import { usePlatform } from '../../platform/context.tsx';
import { useOperator, useRefreshMigration, value } from './api.ts';
import { ItemRow } from './checklist-row.tsx';
import { useCrossChecks } from './cross-checks-panel.tsx';
import { downloadText } from './download.ts';
import { acceptanceItems, cutoverOpen, progressOf, signOffMarkdown, type Item } from './model/checklist.ts';
import { allPassed } from './model/cross-checks.ts';
import { currentReport } from './model/stages.ts';

/** Where each target node answers: its API base URL (added to the console's nodes for the ops proxy) and its gateway. */
function TargetNodes({ detail }: { detail: PlanDetail }) {
  const { t } = useI18n();
  const { host } = usePlatform();
  const refresh = useRefreshMigration();
  const plan = detail.plan as Plan;
  const known = detail.checklist.fields.nodes ?? [];
  const [rows, setRows] = useState<AcceptanceNode[]>(() =>
    plan.target.nodes.map((n) => {
      const k = known.find((x) => x.node_id === n.node_id);
      const host0 = n.addr.replace(/:\d+$/, '');
      return { node_id: n.node_id, api_url: k?.api_url ?? `http://${host0}:5001`, gateway: k?.gateway ?? `ws://${host0}:5200` };
    }),
  );
  const [error, setError] = useState<string>();
  const [saved, setSaved] = useState(false);
  const save = async () => {
    setError(undefined);
    setSaved(false);
    try {
      value(
        await host.migration.setFields({
          scope: detail.summary.id,
          fields: { nodes: rows.map((r) => ({ node_id: r.node_id, api_url: r.api_url!.trim(), gateway: r.gateway!.trim() })) },
        }),
      );
      setSaved(true);
      await refresh();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const edit = (i: number, k: 'api_url' | 'gateway', v: string) => setRows((r) => r.map((x, j) => (j === i ? { ...x, [k]: v } : x)));
  return (
    <Card withBorder padding="sm" data-testid="target-nodes">
      <Text fw={600}>{t('mig.accept.nodes')}</Text>
      <Text size="xs" c="dimmed" mb="xs">
        {t('mig.accept.nodes.hint')}
      </Text>
      <Table verticalSpacing={4}>
        <Table.Thead>
          <Table.Tr>
            <Table.Th w={90}>{t('mig.form.nodeId')}</Table.Th>
            <Table.Th>{t('mig.accept.apiUrl')}</Table.Th>
            <Table.Th>{t('mig.accept.gateway')}</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.map((r, i) => (
            <Table.Tr key={r.node_id}>
              <Table.Td className="num">{r.node_id}</Table.Td>
              <Table.Td>
                <TextInput
                  size="xs"
                  styles={mono}
                  value={r.api_url ?? ''}
                  onChange={(e) => edit(i, 'api_url', e.currentTarget.value)}
                  data-testid={`api-url-${r.node_id}`}
                />
              </Table.Td>
              <Table.Td>
                <TextInput
                  size="xs"
                  styles={mono}
                  value={r.gateway ?? ''}
                  onChange={(e) => edit(i, 'gateway', e.currentTarget.value)}
                  data-testid={`gateway-${r.node_id}`}
                />
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      <Group mt="xs">
        <Button size="xs" onClick={() => void save()} data-testid="save-nodes">
          {t('mig.save')}
        </Button>
        {saved && (
          <Text size="xs" c="green">
            {t('mig.accept.nodesSaved')}
          </Text>
        )}
        {error && (
          <Text size="xs" c="red">
            <Raw>{error}</Raw>
          </Text>
        )}
      </Group>
    </Card>
  );
}

/** Seed 001's rollback table, answered by one question: has v3 received production writes? */
function Rollback({ detail }: { detail: PlanDetail }) {
  const { t } = useI18n();
  const { host } = usePlatform();
  const refresh = useRefreshMigration();
  const w = detail.checklist.fields.production_writes;
  const choice = w === true ? 'yes' : w === false ? 'no' : 'unknown';
  const set = async (v: string) => {
    value(
      await host.migration.setFields({
        scope: detail.summary.id,
        fields: { production_writes: v === 'yes' ? true : v === 'no' ? false : null },
      }),
    );
    await refresh();
  };
  return (
    <Card withBorder padding="sm" h="100%" data-testid="rollback" data-writes={choice}>
      <Text fw={600}>{t('mig.rollback.title')}</Text>
      <Text size="sm" mt={4} mb="xs">
        {t('mig.rollback.question')}
      </Text>
      <SegmentedControl
        fullWidth
        value={choice}
        onChange={(v) => void set(v)}
        data={[
          { value: 'no', label: t('mig.rollback.no') },
          { value: 'yes', label: t('mig.rollback.yes') },
          { value: 'unknown', label: t('mig.rollback.unknown') },
        ]}
      />
      {choice === 'unknown' ? (
        <Text size="sm" c="dimmed" mt="sm">
          {t('mig.rollback.ask')}
        </Text>
      ) : (
        <Alert
          color={choice === 'no' ? 'blue' : 'orange'}
          mt="sm"
          title={t(`mig.rollback.${choice}.title` as MessageKey)}
          data-testid="rollback-row"
        >
          {t(`mig.rollback.${choice}.text` as MessageKey)}
        </Alert>
      )}
      <Text size="xs" c="dimmed" mt="sm">
        {t('mig.rollback.never')}
      </Text>
    </Card>
  );
}

/**
 * Step 9: the seed's deployment and acceptance steps as a checklist kept in
 * the plan's folder (`checklist.json`): proven by the reports, by live
 * checks the host runs through the console's node proxy and a gateway
 * connection, or ticked by a named person; exported as a Markdown sign-off.
 * The cutover item opens only when every other applicable item is done,
 * with the rollback guidance beside it.
 */
export function AcceptancePanel({ state, detail }: { state: MigrationState; detail: PlanDetail }) {
  const { t, f } = useI18n();
  const [operator] = useOperator();
  const { checks } = useCrossChecks(detail);
  const verify = currentReport(detail.runs, 'verify');
  const verifiedOk = verify?.state === 'succeeded' && allPassed(checks);
  const rehearsalOnly = state.preflight?.fields.rehearsal_only === true;
  const items = acceptanceItems({
    plan: detail.plan as Plan,
    doc: detail.checklist,
    verified: {
      ok: verifiedOk,
      evidence: verify
        ? [
            `${verify.report_file}: ${verify.report_status}`,
            t('mig.cross.passedCount', { n: checks.filter((c) => c.state === 'pass').length, total: checks.length }),
          ]
        : [],
    },
    rehearsalOnly,
  });
  const p = progressOf(items);
  const open = cutoverOpen(items, rehearsalOnly);
  const cutover = items.find((i) => i.id === 'cutover')!;
  const exportMd = () => {
    const label = (i: Item) => t(`mig.item.${i.id}` as MessageKey);
    const stateOf = (i: Item) =>
      !i.applicable
        ? t('mig.notApplicable')
        : !i.done
          ? t('mig.md.open')
          : i.by === 'person' && i.tick
            ? t('mig.md.ticked', { by: i.tick.by, time: f.dateTime(Date.parse(i.tick.at)) })
            : i.result
              ? t('mig.md.checked', { time: f.dateTime(Date.parse(i.result.at)) })
              : t('mig.provenReports');
    const md = signOffMarkdown(items, {
      title: t('mig.md.title', { id: detail.summary.id, cluster: detail.summary.cluster_id }),
      meta: [
        [t('mig.plan'), detail.summary.id],
        [t('mig.plan.fileSha'), detail.summary.sha256],
        [t('mig.plan.canonicalSha'), detail.summary.canonical_sha256],
        [t('mig.root'), state.root ?? ''],
        [t('mig.md.exportedBy'), `${operator || '—'}, ${f.dateTime(Date.now())}`],
        [t('mig.md.progress'), t('mig.items', p)],
      ],
      itemsHeading: t('mig.accept.checklist'),
      itemLabel: label,
      itemState: stateOf,
      sections: [
        {
          heading: t('mig.cross.title'),
          lines: checks.map((c) => `${t(`mig.cross.${c.state}` as MessageKey)}: ${t(`mig.cross.${c.id}` as MessageKey)}`),
        },
        {
          heading: t('mig.rollback.title'),
          lines: [
            detail.checklist.fields.production_writes === true
              ? t('mig.rollback.yes.text')
              : detail.checklist.fields.production_writes === false
                ? t('mig.rollback.no.text')
                : t('mig.rollback.ask'),
          ],
        },
      ],
    });
    downloadText(`parley-acceptance-${detail.summary.id}.md`, md, 'text/markdown');
  };
  return (
    <Stack gap="sm" data-testid="acceptance">
      <Group justify="space-between">
        <Text size="sm" c="dimmed">
          {t('mig.accept.intro')} {t('mig.items', p)}
        </Text>
        <Button variant="default" onClick={exportMd} data-testid="export-md">
          {t('mig.accept.export')}
        </Button>
      </Group>
      {rehearsalOnly && (
        <Alert color="orange" title={t('mig.rehearsalOnly')}>
          {t('mig.rehearsalOnly.hint')}
        </Alert>
      )}
      <TargetNodes detail={detail} />
      <Card withBorder padding="sm" data-testid="checklist">
        <Text fw={600} mb="xs">
          {t('mig.accept.checklist')}
        </Text>
        <Stack gap={6}>
          {items
            .filter((i) => i.id !== 'cutover')
            .map((i) => (
              <ItemRow key={i.id} item={i} scope={detail.summary.id} />
            ))}
        </Stack>
      </Card>
      <Grid gap="sm" align="stretch">
        <Grid.Col span={{ base: 12, lg: 7 }}>
          <Stack gap={6}>
            <ItemRow item={cutover} scope={detail.summary.id} locked={!open} />
            {!open && (
              <Text size="xs" c="dimmed" data-testid="cutover-gated">
                {rehearsalOnly ? t('mig.rehearsalOnly.hint') : t('mig.accept.gated')}
              </Text>
            )}
          </Stack>
        </Grid.Col>
        <Grid.Col span={{ base: 12, lg: 5 }}>
          <Rollback detail={detail} />
        </Grid.Col>
      </Grid>
    </Stack>
  );
}
