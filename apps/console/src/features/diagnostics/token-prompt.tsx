import { Alert, Button, Group, PasswordInput, Text } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { ConsoleNode } from '@parley/shared';
import { unwrap } from '../../api/queries.ts';
import { useI18n } from '../../i18n/i18n.tsx';
import { usePlatform } from '../../platform/context.tsx';

/**
 * Asked when a node answers 401 on `/debug/*`: the token goes to the host,
 * which keeps it and adds it to this node's debug requests; the page never
 * sees it again.
 */
export function TokenPrompt({ node }: { node: ConsoleNode }) {
  const { t } = useI18n();
  const { host } = usePlatform();
  const client = useQueryClient();
  const [token, setToken] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const save = async (value: string) => {
    setBusy(true);
    setError(undefined);
    try {
      unwrap(await host.nodes.setToken({ id: node.id, token: value }));
      setToken('');
      await client.invalidateQueries({ queryKey: ['nodes'] });
      await client.invalidateQueries({ queryKey: ['debug', node.id] });
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Alert
      color="yellow"
      variant="light"
      title={node.has_token ? t('diag.tokenRejected') : t('diag.tokenRequired')}
      data-state="unauthorized"
      data-testid="token-prompt"
    >
      <Text size="sm" mb="xs">
        {t('diag.tokenExplain')}
      </Text>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (token) void save(token);
        }}
      >
        <Group align="flex-end">
          <PasswordInput
            label={t('diag.token')}
            value={token}
            onChange={(e) => setToken(e.currentTarget.value)}
            w={320}
            autoComplete="off"
            data-testid="token-input"
          />
          <Button type="submit" loading={busy} disabled={!token} data-testid="token-save">
            {t('diag.useToken')}
          </Button>
          {node.has_token && (
            <Button variant="subtle" color="gray" onClick={() => void save('')}>
              {t('diag.forgetToken')}
            </Button>
          )}
        </Group>
      </form>
      {error && (
        <Text size="sm" c="red" mt="xs">
          {error}
        </Text>
      )}
    </Alert>
  );
}
