import { Badge, Text, Tooltip } from '@mantine/core';
import { VERDICT_LEVELS } from '@parley/shared';
import type { NodeStatus } from '../api/node-status.ts';
import { Raw, useI18n } from '../i18n/i18n.tsx';
import type { MessageKey } from '../i18n/messages.ts';
import { levelColor, reachColor, severityColor } from './levels.ts';

/** A verdict or pressure level; an unknown level is shown as the server wrote it. */
export function LevelBadge({ level, size = 'sm' }: { level: string | undefined; size?: 'xs' | 'sm' | 'md' | 'lg' | 'xl' }) {
  const { t } = useI18n();
  const known = level === undefined || level === 'unknown' || (VERDICT_LEVELS as readonly string[]).includes(level);
  return (
    <Badge
      color={levelColor(level)}
      size={size}
      variant="filled"
      data-level={level ?? 'unknown'}
      style={{ flexShrink: 0, overflow: 'visible' }}
    >
      {known ? t(`level.${level ?? 'unknown'}` as MessageKey) : <Raw>{level}</Raw>}
    </Badge>
  );
}

export function SeverityBadge({ level }: { level: string }) {
  const { t } = useI18n();
  const known = ['warning', 'error', 'critical'].includes(level);
  return (
    <Badge color={severityColor(level)} size="sm" variant="light" data-severity={level}>
      {known ? t(`severity.${level}` as MessageKey) : <Raw>{level}</Raw>}
    </Badge>
  );
}

/** A node's state in one word (ready, not ready, unreachable, warming up, …). */
export function ReachBadge({ kind, detail }: { kind: string; detail?: string | undefined }) {
  const { t } = useI18n();
  const badge = (
    <Badge color={reachColor(kind)} size="sm" variant={kind === 'ready' ? 'light' : 'filled'} data-reach={kind}>
      {t(`reach.${kind}` as MessageKey)}
    </Badge>
  );
  return detail ? (
    <Tooltip label={<Raw>{detail}</Raw>} multiline maw={420}>
      {badge}
    </Tooltip>
  ) : (
    badge
  );
}

/** "stale · 12 s old" next to data that is not current. */
export function StaleMark({ status }: { status: Pick<NodeStatus, 'stale' | 'ageMs'> }) {
  const { t } = useI18n();
  if (!status.stale) return null;
  return (
    <Text span size="xs" c="dimmed" fs="italic" data-stale>
      {t('state.staleAge', { age: Math.round((status.ageMs ?? 0) / 1000) })}
    </Text>
  );
}
