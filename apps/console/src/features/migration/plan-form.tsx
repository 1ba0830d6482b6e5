import { ActionIcon, Button, Card, Group, NumberInput, SimpleGrid, Stack, Table, Text, TextInput } from '@mantine/core';
import { HASH_SLOT_COUNT } from '@parley/shared';
import { useI18n } from '../../i18n/i18n.tsx';
import { getAt, setAt } from './model/plan-form.ts';
import { Advanced, Preview } from './plan-advanced.tsx';
import { mono, useField, useIssueText, type Props } from './plan-fields.tsx';

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
