import { Badge, Button, Checkbox, Group, Paper, Stack, Text, TextInput, ThemeIcon } from '@mantine/core';
import { useState } from 'react';
import type { CheckKind } from '@parley/shared';
import { Raw, useI18n } from '../../i18n/i18n.tsx';
import type { MessageKey } from '../../i18n/messages.ts';
import { usePlatform } from '../../platform/context.tsx';
import { useOperator, useRefreshMigration, value } from './api.ts';
import type { Item } from './model/checklist.ts';

const KIND_COLOR: Record<Item['kind'], string> = {
  report: 'teal',
  auto: 'teal',
  semi: 'cyan',
  manual: 'gray',
  conditional: 'violet',
  gated: 'orange',
};

/**
 * One checklist item: what the seed asks, how it is proven (a report, a live
 * check the host runs, or a person's tick with name and time), its state and
 * its evidence. `locked`: the item cannot be ticked yet (cutover before the rest).
 */
export function ItemRow({ item, scope, planId, locked = false }: { item: Item; scope: string; planId?: string; locked?: boolean }) {
  const { t, f } = useI18n();
  const { host } = usePlatform();
  const refresh = useRefreshMigration();
  const [operator] = useOperator();
  const [note, setNote] = useState(item.tick?.note ?? '');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const act = async (fn: () => Promise<unknown>) => {
    setBusy(true);
    setError(undefined);
    try {
      await fn();
      await refresh();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const tick = (done: boolean) => {
    if (!operator.trim()) return setError(t('mig.needOperator'));
    void act(async () =>
      value(await host.migration.tick({ scope, item: item.id, done, by: operator.trim(), ...(note.trim() ? { note } : {}) })),
    );
  };
  const check = () =>
    void act(async () =>
      value(
        await host.migration.check({
          scope,
          kind: item.check as CheckKind,
          ...(planId && scope === 'preflight' ? { plan_id: planId } : {}),
        }),
      ),
    );
  const failed = item.result && !item.result.ok;
  const icon = !item.applicable ? '–' : item.done ? '✓' : failed ? '✗' : '';
  const color = !item.applicable ? 'gray' : item.done ? 'green' : failed ? 'red' : 'gray';
  const tickable =
    item.applicable && (item.kind === 'manual' || item.kind === 'semi' || item.kind === 'conditional' || item.kind === 'gated');
  return (
    <Paper withBorder p="xs" data-testid={`item-${item.id}`} data-done={item.done} data-applicable={item.applicable}>
      <Group align="flex-start" wrap="nowrap" gap="sm">
        <ThemeIcon size="md" radius="xl" color={color} variant={item.done ? 'filled' : 'light'}>
          <Text size="sm" fw={700}>
            {icon}
          </Text>
        </ThemeIcon>
        <Stack gap={2} style={{ flex: 1, minWidth: 0 }}>
          <Text size="sm" fw={600}>
            {item.step && (
              <Text span c="dimmed" fw={400} className="num">
                {item.step}.{' '}
              </Text>
            )}
            {t(`mig.item.${item.id}` as MessageKey)}
          </Text>
          <Group gap={6}>
            <Badge size="xs" variant="light" color={KIND_COLOR[item.kind]}>
              {t(`mig.kind.${item.kind}` as MessageKey)}
            </Badge>
            {!item.applicable && (
              <Badge size="xs" variant="outline" color="gray">
                {t('mig.notApplicable')}
              </Badge>
            )}
          </Group>
          <Text size="xs" c="dimmed">
            {t(`mig.item.${item.id}.hint` as MessageKey)}
          </Text>
          {item.done && item.by === 'person' && item.tick && (
            <Text size="xs" c="green.8" data-testid="ticked-by">
              {t('mig.tickedBy', { time: f.dateTime(Date.parse(item.tick.at)) })} <Raw>{item.tick.by}</Raw>
            </Text>
          )}
          {item.done && item.by === 'proof' && (
            <Text size="xs" c="green.8" data-testid="proven">
              {item.result ? t('mig.provenCheck', { time: f.dateTime(Date.parse(item.result.at)) }) : t('mig.provenReports')}
            </Text>
          )}
          {failed && (
            <Text size="xs" c="red" data-testid="check-failed">
              {t('mig.checkFailed', { time: f.dateTime(Date.parse(item.result!.at)) })}
            </Text>
          )}
          {(item.result?.evidence ?? item.evidence ?? []).map((e, i) => (
            <Text key={i} size="xs" ff="monospace" c={failed ? 'red.8' : 'dimmed'} style={{ wordBreak: 'break-all' }}>
              <Raw>{e}</Raw>
            </Text>
          ))}
          {item.tick?.note && (
            <Text size="xs" fs="italic">
              <Raw>{item.tick.note}</Raw>
            </Text>
          )}
          {error && (
            <Text size="xs" c="red">
              <Raw>{error}</Raw>
            </Text>
          )}
        </Stack>
        <Group gap="xs" wrap="nowrap" align="center">
          {item.check && item.applicable && (
            <Button size="xs" variant="light" loading={busy} onClick={check} data-testid={`check-${item.id}`}>
              {t('mig.runCheck')}
            </Button>
          )}
          {tickable && !(item.done && item.by === 'proof') && (
            <>
              <TextInput size="xs" placeholder={t('mig.note')} value={note} onChange={(e) => setNote(e.currentTarget.value)} w={150} />
              <Checkbox
                label={t('mig.done')}
                checked={item.tick?.done === true}
                disabled={busy || (locked && item.tick?.done !== true)}
                onChange={(e) => tick(e.currentTarget.checked)}
                data-testid={`tick-${item.id}`}
              />
            </>
          )}
        </Group>
      </Group>
    </Paper>
  );
}
