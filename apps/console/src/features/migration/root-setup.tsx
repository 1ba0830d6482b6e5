import { Alert, Button, Card, Group, Stack, Text, TextInput } from '@mantine/core';
import { useEffect, useRef, useState } from 'react';
import { Raw, useI18n } from '../../i18n/i18n.tsx';
import { mono } from './plan-fields.tsx';
import { usePlatform } from '../../platform/context.tsx';
import { useLastRoot, useRefreshMigration, value } from './api.ts';

/**
 * No migration root yet: the operator names one folder on the migration
 * machine (the host checks it: absolute, empty or made by this console).
 * Everything the wizard writes goes under it.
 */
export function RootSetup() {
  const { t } = useI18n();
  const { host } = usePlatform();
  const refresh = useRefreshMigration();
  const [last, setLast] = useLastRoot();
  const [path, setPath] = useState(last);
  const [error, setError] = useState<string>();
  const tried = useRef(false);
  const open = async (p = path) => {
    setError(undefined);
    try {
      value(await host.migration.setRoot({ path: p.trim() }));
      setLast(p.trim());
      await refresh();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  // The root this browser used last is opened again (after a restart of the console, say); the host checks it as ever.
  useEffect(() => {
    if (tried.current || !last) return;
    tried.current = true;
    void open(last);
    // once, on mount
  }, []);
  return (
    <Card withBorder padding="md" maw={760} data-testid="root-setup">
      <Stack gap="sm">
        <Text fw={600}>{t('mig.rootTitle')}</Text>
        <Text size="sm" c="dimmed">
          {t('mig.rootIntro')}
        </Text>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void open();
          }}
        >
          <Group align="flex-end">
            <TextInput
              label={t('mig.root')}
              placeholder="/srv/migration"
              value={path}
              onChange={(e) => setPath(e.currentTarget.value)}
              w={420}
              styles={mono}
              data-testid="root-path"
            />
            <Button type="submit" disabled={!path.trim()} data-testid="root-open">
              {t('mig.rootOpen')}
            </Button>
          </Group>
        </form>
        {error && (
          <Alert color="red" data-testid="root-error">
            <Raw>{error}</Raw>
          </Alert>
        )}
      </Stack>
    </Card>
  );
}
