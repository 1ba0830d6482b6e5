import {
  Accordion,
  ActionIcon,
  Button,
  Card,
  Checkbox,
  Code,
  CopyButton,
  Group,
  NumberInput,
  SimpleGrid,
  Stack,
  Switch,
  Table,
  Text,
  TextInput,
} from '@mantine/core';
import { useState } from 'react';
import { HASH_SLOT_COUNT, type PlanIssue } from '@parley/shared';
import { Raw, useI18n } from '../../i18n/i18n.tsx';
import type { MessageKey } from '../../i18n/messages.ts';
import { DATA_CHANGING, getAt, issuesAt, setAt, startupConfig, type Validation } from './model/plan-form.ts';

type Props = { doc: unknown; v: Validation; onChange: (doc: unknown) => void };

/** Monospace inputs for paths, addresses and times (the label stays in the page's font). */
export const mono = { input: { fontFamily: 'var(--mantine-font-family-monospace)' } };

/** A member's problems in the console's words where planIssues names the kind, else as parleyctl says them. */
function useIssueText(v: Validation): (ptr: string) => string | undefined {
  const { t } = useI18n();
  const word = (i: PlanIssue) => (i.hint ? t(`mig.issue.${i.hint}` as MessageKey, i.params) : i.message);
  return (ptr) => [...new Set(issuesAt(v, ptr).map(word))].join('; ') || undefined;
}

/** The field props of one member: its value, its problems, and a setter; `data-pointer` names it for tests and people alike. */
function useField({ doc, v, onChange }: Props) {
  const err = useIssueText(v);
  return {
    text: (ptr: string) => ({
      value: typeof getAt(doc, ptr) === 'string' ? (getAt(doc, ptr) as string) : '',
      onChange: (e: React.ChangeEvent<HTMLInputElement>) => onChange(setAt(doc, ptr, e.currentTarget.value)),
      error: err(ptr),
      'data-pointer': ptr,
    }),
    num: (ptr: string) => ({
      value: typeof getAt(doc, ptr) === 'number' ? (getAt(doc, ptr) as number) : '',
      onChange: (n: number | string) => onChange(setAt(doc, ptr, n === '' ? undefined : Number(n))),
      error: err(ptr),
      allowDecimal: false,
      'data-pointer': ptr,
    }),
  };
}

function Sources(p: Props) {
  const { t } = useI18n();
  const field = useField(p);
  const rows = (getAt(p.doc, '/sources') as unknown[] | undefined) ?? [];
  return (
    <Card withBorder padding="sm">
      <Text fw={600}>{t('mig.form.sources')}</Text>
      <Text size="xs" c="dimmed" mb="xs">
        {t('mig.form.sources.hint')}
      </Text>
      <Table verticalSpacing={4}>
        <Table.Thead>
          <Table.Tr>
            <Table.Th w={120}>{t('mig.form.v2NodeId')}</Table.Th>
            <Table.Th>{t('mig.form.sourceDir')}</Table.Th>
            <Table.Th w={130}>{t('mig.form.shardCount')}</Table.Th>
            <Table.Th w={40} />
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.map((_, i) => (
            <Table.Tr key={i}>
              <Table.Td>
                <NumberInput size="xs" {...field.num(`/sources/${i}/node_id`)} />
              </Table.Td>
              <Table.Td>
                <TextInput
                  size="xs"
                  styles={mono}
                  placeholder="/srv/migration/v2-backup/node1/data"
                  {...field.text(`/sources/${i}/data_dir`)}
                />
              </Table.Td>
              <Table.Td>
                <NumberInput size="xs" {...field.num(`/sources/${i}/shard_count`)} />
              </Table.Td>
              <Table.Td>
                <ActionIcon
                  variant="subtle"
                  color="red"
                  disabled={rows.length < 2}
                  onClick={() => p.onChange(setAt(p.doc, `/sources/${i}`, undefined))}
                  aria-label={t('mig.form.remove')}
                >
                  ×
                </ActionIcon>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      <Button
        size="xs"
        variant="subtle"
        mt={4}
        onClick={() => p.onChange(setAt(p.doc, `/sources/${rows.length}`, { node_id: rows.length + 1, data_dir: '', shard_count: 16 }))}
      >
        {t('mig.form.addSource')}
      </Button>
    </Card>
  );
}

function Target(p: Props) {
  const { t } = useI18n();
  const field = useField(p);
  const err = useIssueText(p.v);
  const nodes = (getAt(p.doc, '/target/nodes') as unknown[] | undefined) ?? [];
  return (
    <Card withBorder padding="sm">
      <Text fw={600} mb="xs">
        {t('mig.form.target')}
      </Text>
      <SimpleGrid cols={{ base: 2, lg: 3 }} spacing="xs">
        <TextInput size="xs" label={t('mig.form.clusterId')} {...field.text('/target/cluster_id')} />
        <Group gap={4} align="flex-end" wrap="nowrap">
          <TextInput size="xs" style={{ flex: 1 }} label={t('mig.form.createdAt')} styles={mono} {...field.text('/target/created_at')} />
          <Button
            size="xs"
            variant="default"
            onClick={() => p.onChange(setAt(p.doc, '/target/created_at', new Date().toISOString().replace(/\.\d+Z$/, 'Z')))}
          >
            {t('mig.form.now')}
          </Button>
        </Group>
        <NumberInput
          size="xs"
          label={t('mig.form.slotCount')}
          description={t('mig.form.slotCount.hint')}
          {...field.num('/target/slot_count')}
        />
        <NumberInput
          size="xs"
          label={t('mig.form.hashSlots')}
          description={t('mig.form.hashSlots.hint')}
          value={HASH_SLOT_COUNT}
          readOnly
          data-pointer="/target/hash_slot_count"
          error={err('/target/hash_slot_count')}
        />
        <NumberInput size="xs" label={t('mig.form.replicas')} {...field.num('/target/replicas')} />
        <NumberInput size="xs" label={t('mig.form.channelReplicas')} {...field.num('/target/channel_replicas')} />
      </SimpleGrid>
      <Text size="sm" fw={600} mt="sm">
        {t('mig.form.targetNodes')}
      </Text>
      <Table verticalSpacing={4}>
        <Table.Thead>
          <Table.Tr>
            <Table.Th w={110}>{t('mig.form.nodeId')}</Table.Th>
            <Table.Th w={200}>{t('mig.form.addr')}</Table.Th>
            <Table.Th>{t('mig.form.targetDir')}</Table.Th>
            <Table.Th w={40} />
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {nodes.map((_, i) => (
            <Table.Tr key={i}>
              <Table.Td>
                <NumberInput size="xs" {...field.num(`/target/nodes/${i}/node_id`)} />
              </Table.Td>
              <Table.Td>
                <TextInput size="xs" styles={mono} placeholder="10.0.0.21:11110" {...field.text(`/target/nodes/${i}/addr`)} />
              </Table.Td>
              <Table.Td>
                <TextInput size="xs" styles={mono} {...field.text(`/target/nodes/${i}/data_dir`)} />
              </Table.Td>
              <Table.Td>
                <ActionIcon
                  variant="subtle"
                  color="red"
                  disabled={nodes.length < 2}
                  onClick={() => p.onChange(setAt(p.doc, `/target/nodes/${i}`, undefined))}
                  aria-label={t('mig.form.remove')}
                >
                  ×
                </ActionIcon>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      <Button
        size="xs"
        variant="subtle"
        mt={4}
        onClick={() => p.onChange(setAt(p.doc, `/target/nodes/${nodes.length}`, { node_id: nodes.length + 1, addr: '', data_dir: '' }))}
      >
        {t('mig.form.addNode')}
      </Button>
    </Card>
  );
}

const SWITCHES: Array<[string, MessageKey]> = [
  ['/messages/keep_latest_duplicates', 'mig.policy.keep_latest_duplicates'],
  ['/messages/resolve_duplicate_chains', 'mig.policy.resolve_duplicate_chains'],
  ['/messages/compact_sequences', 'mig.policy.compact_sequences'],
  ['/messages/exclude_cmd', 'mig.policy.exclude_cmd'],
  ['/messages/exclude_streams', 'mig.policy.exclude_streams'],
  ['/exclusions/legacy_stream_storage', 'mig.policy.legacy_stream_storage'],
  ['/metadata/preserve_all_conversations', 'mig.policy.preserve_all_conversations'],
  ['/metadata/derive_unread_from_boundaries', 'mig.policy.derive_unread_from_boundaries'],
];

const LISTS = [
  'quarantine',
  'metadata/conversation_recoveries',
  'metadata/conversation_replicas',
  'metadata/missing_conversations',
  'plugin_nodes',
  'plugin_configs',
  'plugin_artifacts',
];

/** The optional members (policies): collapsed, each data-changing one behind an acknowledgement. */
function Advanced(p: Props) {
  const { t } = useI18n();
  const field = useField(p);
  const err = useIssueText(p.v);
  const [ack, setAck] = useState(false);
  const quarantine = (getAt(p.doc, '/quarantine') as Array<Record<string, unknown>> | undefined) ?? [];
  const count = (path: string) => (getAt(p.doc, `/${path}`) as unknown[] | undefined)?.length ?? 0;
  return (
    <Accordion variant="contained" data-testid="advanced">
      <Accordion.Item value="advanced">
        <Accordion.Control>
          <Text fw={600}>{t('mig.form.advanced')}</Text>
          <Text size="xs" c="dimmed">
            {t('mig.form.advanced.hint')}
          </Text>
        </Accordion.Control>
        <Accordion.Panel>
          <Stack gap="xs">
            <Checkbox label={t('mig.form.ack')} checked={ack} onChange={(e) => setAck(e.currentTarget.checked)} data-testid="policy-ack" />
            <SimpleGrid cols={2} spacing={6}>
              {SWITCHES.map(([ptr, key]) => {
                const on = getAt(p.doc, ptr) === true;
                return (
                  <Switch
                    key={ptr}
                    size="xs"
                    label={<Raw>{ptr.split('/').slice(1).join('.')}</Raw>}
                    description={t(key)}
                    checked={on}
                    disabled={!on && !ack && (DATA_CHANGING as readonly string[]).includes(ptr)}
                    onChange={(e) => p.onChange(setAt(p.doc, ptr, e.currentTarget.checked ? true : undefined))}
                    error={err(ptr)}
                    data-pointer={ptr}
                  />
                );
              })}
            </SimpleGrid>
            <NumberInput
              size="xs"
              w={320}
              label={<Raw>metadata.conversation_list_limit</Raw>}
              description={t('mig.policy.conversation_list_limit')}
              {...field.num('/metadata/conversation_list_limit')}
            />
            <Text size="sm" fw={600}>
              {t('mig.form.quarantine', { n: quarantine.length })}
            </Text>
            {quarantine.length > 0 && (
              <Table verticalSpacing={2} fz="xs" data-testid="quarantine-table">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>{t('mig.form.v2NodeId')}</Table.Th>
                    <Table.Th>{t('mig.blocker.shard')}</Table.Th>
                    <Table.Th>{t('mig.form.reason')}</Table.Th>
                    <Table.Th>{t('mig.form.key')}</Table.Th>
                    <Table.Th />
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {quarantine.map((q, i) => (
                    <Table.Tr key={i}>
                      <Table.Td className="num">{String(q.node_id)}</Table.Td>
                      <Table.Td className="num">{String(q.shard)}</Table.Td>
                      <Table.Td>
                        <Raw>{String(q.reason)}</Raw>
                      </Table.Td>
                      <Table.Td ff="monospace">
                        <Raw>{String(q.key)}</Raw>
                      </Table.Td>
                      <Table.Td>
                        <ActionIcon
                          size="xs"
                          variant="subtle"
                          color="red"
                          onClick={() => p.onChange(setAt(p.doc, `/quarantine/${i}`, undefined))}
                          aria-label={t('mig.form.remove')}
                        >
                          ×
                        </ActionIcon>
                      </Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            )}
            <Text size="xs" c="dimmed">
              {LISTS.slice(1)
                .map((l) => `${l.replace('/', '.')}: ${count(l)}`)
                .join(' · ')}{' '}
              — {t('mig.form.listsInJson')}
            </Text>
          </Stack>
        </Accordion.Panel>
      </Accordion.Item>
    </Accordion>
  );
}

/** Each target node's startup settings that must equal the plan (deployment step 2), to copy into its config. */
function Preview({ doc }: { doc: unknown }) {
  const { t } = useI18n();
  const nodes = (getAt(doc, '/target/nodes') as unknown[] | undefined) ?? [];
  return (
    <Card withBorder padding="sm" data-testid="config-preview">
      <Text fw={600}>{t('mig.form.preview')}</Text>
      <Text size="xs" c="dimmed" mb="xs">
        {t('mig.form.preview.hint')}
      </Text>
      <SimpleGrid cols={{ base: 1, lg: 2 }} spacing="xs">
        {nodes.map((_, i) => {
          const text = startupConfig(doc, i);
          return (
            <Stack key={i} gap={4}>
              {/* a fragment of the node's config file, copied as it is: never translated */}
              <Code block data-raw>
                {text}
              </Code>
              <CopyButton value={text}>
                {({ copied, copy }) => (
                  <Button size="xs" variant="default" onClick={copy} w={120}>
                    {copied ? t('common.copied') : t('mig.copy')}
                  </Button>
                )}
              </CopyButton>
            </Stack>
          );
        })}
      </SimpleGrid>
    </Card>
  );
}

/** The plan as a form: sources, target and its nodes, the policies, and the derived startup settings. */
export function PlanForm(p: Props) {
  return (
    <Stack gap="sm" data-testid="plan-form">
      <Sources {...p} />
      <Target {...p} />
      <Advanced {...p} />
      <Preview doc={p.doc} />
    </Stack>
  );
}
