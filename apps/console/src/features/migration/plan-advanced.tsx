import {
  Accordion,
  ActionIcon,
  Button,
  Card,
  Checkbox,
  Code,
  CopyButton,
  NumberInput,
  SimpleGrid,
  Stack,
  Switch,
  Table,
  Text,
} from '@mantine/core';
import { useState } from 'react';
import { Raw, useI18n } from '../../i18n/i18n.tsx';
import type { MessageKey } from '../../i18n/messages.ts';
import { DATA_CHANGING, getAt, setAt, startupConfig } from './model/plan-form.ts';
import { useField, useIssueText, type Props } from './plan-fields.tsx';

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
export function Advanced(p: Props) {
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
export function Preview({ doc }: { doc: unknown }) {
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
