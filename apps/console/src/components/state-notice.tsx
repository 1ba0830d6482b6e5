import { Alert, Group, Loader, Text } from '@mantine/core';
import type { NodeStatus } from '../api/node-status.ts';
import { Raw, ServerText, useI18n } from '../i18n/i18n.tsx';
import type { MessageKey } from '../i18n/messages.ts';
import { reachColor } from './levels.ts';

/**
 * Why a panel has no current data, each state with its own words and
 * colour: loading, warming up (503), disabled (404), unreachable (kept data
 * is marked stale elsewhere), bad response (first schema error),
 * unauthorized (401), …
 */
export function StateNotice({ status, disabledKey = 'state.disabled.top' }: { status: NodeStatus; disabledKey?: MessageKey }) {
  const { t } = useI18n();
  if (status.kind === 'ok') return null;
  if (status.kind === 'loading') {
    return (
      <Group gap="xs" data-state="loading">
        <Loader size="xs" />
        <Text size="sm" c="dimmed">
          {t('state.loading')}
        </Text>
      </Group>
    );
  }
  const title = status.kind === 'disabled' ? t(disabledKey) : t(`state.${status.kind}` as MessageKey);
  return (
    <Alert color={reachColor(status.kind)} variant="light" title={title} data-state={status.kind} p="xs">
      <Text size="sm">{t((status.kind === 'disabled' ? `${disabledKey}.hint` : `state.${status.kind}.hint`) as MessageKey)}</Text>
      {status.detail && (
        <Text size="xs" c="dimmed" mt={4}>
          {t('state.detail')}: {status.kind === 'bad_response' ? <Raw>{status.detail}</Raw> : <ServerText text={status.detail} />}
        </Text>
      )}
    </Alert>
  );
}
