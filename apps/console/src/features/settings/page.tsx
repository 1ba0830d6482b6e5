import { Badge, Button, Card, Checkbox, Group, NativeSelect, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { unwrap, useNodeList } from '../../api/queries.ts';
import { setControls, useControls, type LocalePref, type SchemePref } from '../../app/controls.ts';
import { Raw, useI18n } from '../../i18n/i18n.tsx';
import { useNodeName } from '../../app/node-names.ts';
import { usePlatform } from '../../platform/context.tsx';

function NodesCard() {
  const { t } = useI18n();
  const { host, capabilities } = usePlatform();
  const client = useQueryClient();
  const nodes = useNodeList();
  const nameOf = useNodeName();
  const [url, setUrl] = useState('');
  const [name, setName] = useState('');
  const [error, setError] = useState<string>();
  const refresh = () => client.invalidateQueries({ queryKey: ['nodes'] });
  const add = async () => {
    setError(undefined);
    try {
      unwrap(await host.nodes.add(name.trim() ? { url: url.trim(), name: name.trim() } : { url: url.trim() }));
      setUrl('');
      setName('');
      await refresh();
    } catch (err) {
      setError((err as Error).message.replace(/^\w+: /, ''));
    }
  };
  const remove = async (id: string) => {
    unwrap(await host.nodes.remove({ id }));
    await refresh();
  };
  return (
    <Card withBorder padding="sm" data-testid="nodes-card">
      <Text fw={600}>{t('settings.nodes')}</Text>
      <Text size="sm" c="dimmed" mb="xs">
        {capabilities.persistentNodes ? t('settings.nodesDesktop') : t('settings.nodesWeb')}
      </Text>
      <Table verticalSpacing={4} data-testid="nodes-list">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>{t('settings.nodeName')}</Table.Th>
            <Table.Th>{t('settings.nodeUrl')}</Table.Th>
            <Table.Th>{t('settings.token')}</Table.Th>
            <Table.Th />
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {(nodes.data ?? []).map((n) => (
            <Table.Tr key={n.id} data-node={n.id}>
              <Table.Td>
                <Raw>{nameOf(n)}</Raw>
              </Table.Td>
              <Table.Td ff="monospace">
                <Raw>{n.url}</Raw>
              </Table.Td>
              <Table.Td>
                {n.has_token ? (
                  <Badge size="xs" color="blue">
                    {t('settings.tokenKept')}
                  </Badge>
                ) : (
                  <Text size="xs" c="dimmed">
                    {t('settings.noToken')}
                  </Text>
                )}
              </Table.Td>
              <Table.Td ta="right">
                <Button size="xs" variant="subtle" color="red" onClick={() => void remove(n.id)} data-testid={`remove-${n.id}`}>
                  {t('settings.remove')}
                </Button>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void add();
        }}
      >
        <Group align="flex-end" mt="sm">
          <TextInput
            label={t('settings.nodeUrl')}
            placeholder="http://127.0.0.1:5001"
            value={url}
            onChange={(e) => setUrl(e.currentTarget.value)}
            w={300}
            data-testid="add-node-url"
          />
          <TextInput label={t('settings.nodeNameOptional')} value={name} onChange={(e) => setName(e.currentTarget.value)} w={180} />
          <Button type="submit" disabled={!url.trim()} data-testid="add-node">
            {t('settings.add')}
          </Button>
        </Group>
      </form>
      {error && (
        <Text size="sm" c="red" mt="xs" data-testid="add-node-error">
          <Raw>{error}</Raw>
        </Text>
      )}
    </Card>
  );
}

function ContextsCard() {
  const { t } = useI18n();
  const c = useControls();
  const nodes = useNodeList();
  const nameOf = useNodeName();
  const [name, setName] = useState('');
  const [picked, setPicked] = useState<string[]>([]);
  const save = () => {
    const n = name.trim();
    if (!n || picked.length === 0) return;
    setControls({ contexts: [...c.contexts.filter((x) => x.name !== n), { name: n, nodeIds: picked }] });
    setName('');
    setPicked([]);
  };
  return (
    <Card withBorder padding="sm">
      <Text fw={600}>{t('settings.contexts')}</Text>
      <Text size="sm" c="dimmed" mb="xs">
        {t('settings.contextsExplain')}
      </Text>
      {c.contexts.map((x) => (
        <Group key={x.name} justify="space-between">
          <Text size="sm">
            <Raw>{x.name}</Raw> · {t('settings.contextNodes', { n: x.nodeIds.length })}
          </Text>
          <Button
            size="xs"
            variant="subtle"
            color="red"
            onClick={() =>
              setControls({ contexts: c.contexts.filter((y) => y.name !== x.name), context: c.context === x.name ? '' : c.context })
            }
          >
            {t('settings.remove')}
          </Button>
        </Group>
      ))}
      <Group align="flex-end" mt="sm">
        <TextInput label={t('settings.contextName')} value={name} onChange={(e) => setName(e.currentTarget.value)} w={200} />
        <Group gap="xs">
          {(nodes.data ?? []).map((n) => (
            <Checkbox
              key={n.id}
              label={<Raw>{nameOf(n)}</Raw>}
              checked={picked.includes(n.id)}
              onChange={(e) => setPicked(e.currentTarget.checked ? [...picked, n.id] : picked.filter((p) => p !== n.id))}
            />
          ))}
        </Group>
        <Button onClick={save} disabled={!name.trim() || picked.length === 0}>
          {t('settings.saveContext')}
        </Button>
      </Group>
    </Card>
  );
}

/** `/settings`: language, theme, the nodes the console may reach, and saved contexts. */
export function SettingsPage() {
  const { t } = useI18n();
  const c = useControls();
  return (
    <Stack gap="sm" data-page="settings">
      <Title order={3}>{t('nav.settings')}</Title>
      <Card withBorder padding="sm">
        <Group gap="xl">
          <NativeSelect
            label={t('settings.language')}
            data-testid="language-select"
            value={c.locale}
            onChange={(e) => setControls({ locale: e.currentTarget.value as LocalePref })}
            data={[
              { value: 'auto', label: t('settings.languageAuto') },
              { value: 'en', label: 'English' },
              { value: 'zh-CN', label: '简体中文' },
            ]}
          />
          <NativeSelect
            label={t('settings.theme')}
            value={c.scheme}
            onChange={(e) => setControls({ scheme: e.currentTarget.value as SchemePref })}
            data={[
              { value: 'auto', label: t('settings.themeAuto') },
              { value: 'light', label: t('settings.themeLight') },
              { value: 'dark', label: t('settings.themeDark') },
            ]}
          />
        </Group>
      </Card>
      <NodesCard />
      <ContextsCard />
    </Stack>
  );
}
