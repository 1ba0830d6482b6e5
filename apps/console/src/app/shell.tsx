import { Alert, AppShell, Badge, Group, NavLink, ScrollArea, Text } from '@mantine/core';
import { NavLink as RouterLink, Outlet, useLocation } from 'react-router';
import { OpsFailure } from '../api/ops.ts';
import { useNodeList } from '../api/queries.ts';
import { Raw, useI18n } from '../i18n/i18n.tsx';
import type { MessageKey } from '../i18n/messages.ts';
import { usePlatform } from '../platform/context.tsx';
import { useNodeName } from './node-names.ts';
import { TopBar } from './topbar.tsx';

const PAGES: { to: string; key: MessageKey }[] = [
  { to: '/overview', key: 'nav.overview' },
  { to: '/alerts', key: 'nav.alerts' },
  { to: '/pressure', key: 'nav.pressure' },
  { to: '/runtime/traffic', key: 'nav.runtime' },
  { to: '/diagnostics', key: 'nav.diagnostics' },
  { to: '/snapshots', key: 'nav.snapshots' },
  { to: '/settings', key: 'nav.settings' },
];

/** The migration wizard (seed 001): its steps, every report, and the acceptance checklist. */
const MIGRATION: { to: string; key: MessageKey; active: (path: string) => boolean }[] = [
  { to: '/migration/preflight', key: 'nav.wizard', active: (p) => p.startsWith('/migration') && !/^\/migration\/(reports|accept)/.test(p) },
  { to: '/migration/reports', key: 'nav.reports', active: (p) => p.startsWith('/migration/reports') },
  { to: '/migration/accept', key: 'nav.acceptance', active: (p) => p.startsWith('/migration/accept') },
];

/** Header with the page controls, a left navigation, and the page. */
export function Shell() {
  const { t } = useI18n();
  const location = useLocation();
  const nodes = useNodeList();
  const platform = usePlatform();
  const nameOf = useNodeName();
  const expired = nodes.error instanceof OpsFailure && nodes.error.kind === 'session_expired';
  return (
    <AppShell header={{ height: 52 }} navbar={{ width: 190, breakpoint: 'sm' }} padding="md">
      <AppShell.Header>
        <TopBar />
      </AppShell.Header>
      <AppShell.Navbar p="xs">
        <AppShell.Section>
          <Text size="xs" c="dimmed" fw={700} tt="uppercase" px="sm" py={4}>
            {t('nav.operations')}
          </Text>
          {PAGES.map((p) => (
            <NavLink
              key={p.to}
              component={RouterLink}
              to={p.to}
              label={t(p.key)}
              active={location.pathname.startsWith(p.to.startsWith('/runtime') ? '/runtime' : p.to)}
              data-nav={p.to}
            />
          ))}
          <Text size="xs" c="dimmed" fw={700} tt="uppercase" px="sm" py={4} mt="md">
            {t('nav.migration')}
          </Text>
          {MIGRATION.map((p) => (
            <NavLink key={p.to} component={RouterLink} to={p.to} label={t(p.key)} active={p.active(location.pathname)} data-nav={p.to} />
          ))}
        </AppShell.Section>
        <AppShell.Section grow component={ScrollArea} mt="md">
          <Text size="xs" c="dimmed" fw={700} tt="uppercase" px="sm" py={4}>
            {t('nav.nodes')}
          </Text>
          {(nodes.data ?? []).map((n) => (
            <NavLink
              key={n.id}
              component={RouterLink}
              to={`/nodes/${n.id}`}
              label={<Raw>{nameOf(n)}</Raw>}
              active={location.pathname === `/nodes/${n.id}`}
            />
          ))}
        </AppShell.Section>
        <AppShell.Section>
          <Group gap={4} px="sm" pb={4}>
            <Badge size="xs" variant="outline" color="gray">
              {platform.kind === 'desktop' ? t('platform.desktop') : t('platform.web')}
            </Badge>
          </Group>
        </AppShell.Section>
      </AppShell.Navbar>
      <AppShell.Main>
        {expired && (
          <Alert color="red" title={t('session.expired')} mb="md" data-state="session_expired">
            {t('session.expired.hint')}
          </Alert>
        )}
        <Outlet />
      </AppShell.Main>
    </AppShell>
  );
}
