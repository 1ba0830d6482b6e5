import { createTheme, MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { useEffect, useMemo } from 'react';
import { BrowserRouter, Navigate, Route, Routes } from 'react-router';
import { AlertsPage } from '../features/alerts/page.tsx';
import { DiagnosticsPage } from '../features/diagnostics/page.tsx';
import { MigrationPage } from '../features/migration/page.tsx';
import { ReportsPage } from '../features/migration/reports-page.tsx';
import { NodePage } from '../features/node/page.tsx';
import { OverviewPage } from '../features/overview/page.tsx';
import { PressurePage } from '../features/pressure/page.tsx';
import { RuntimePage } from '../features/runtime/page.tsx';
import { SettingsPage } from '../features/settings/page.tsx';
import { SnapshotsPage } from '../features/snapshots/page.tsx';
import { I18nProvider, resolveLocale } from '../i18n/i18n.tsx';
import { PlatformProvider } from '../platform/context.tsx';
import type { Platform } from '../platform/platform.ts';
import { ringCapacity } from '../lib/series-store.ts';
import { useControls } from './controls.ts';
import { seriesStore } from './series.ts';
import { Shell } from './shell.tsx';

const theme = createTheme({
  primaryColor: 'blue',
  defaultRadius: 'sm',
  fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Noto Sans CJK SC", "PingFang SC", "Microsoft YaHei", sans-serif',
  fontFamilyMonospace: 'ui-monospace, "SFMono-Regular", "JetBrains Mono", Menlo, Consolas, monospace',
});

export function App({ platform }: { platform: Platform }) {
  const client = useMemo(() => new QueryClient({ defaultOptions: { queries: { refetchOnWindowFocus: false } } }), []);
  const c = useControls();
  const locale = resolveLocale(c.locale, navigator.languages ?? [navigator.language]);

  useEffect(() => {
    document.documentElement.lang = locale;
  }, [locale]);
  // Each ring holds range ÷ interval points.
  useEffect(() => seriesStore.setCapacity(ringCapacity(c.rangeSec, c.refreshMs)), [c.rangeSec, c.refreshMs]);

  return (
    <PlatformProvider platform={platform}>
      <QueryClientProvider client={client}>
        <MantineProvider theme={theme} defaultColorScheme="auto" {...(c.scheme === 'auto' ? {} : { forceColorScheme: c.scheme })}>
          <I18nProvider locale={locale}>
            <BrowserRouter>
              <Routes>
                <Route element={<Shell />}>
                  <Route index element={<Navigate to="/overview" replace />} />
                  <Route path="/overview" element={<OverviewPage />} />
                  <Route path="/nodes/:id" element={<NodePage />} />
                  <Route path="/alerts" element={<AlertsPage />} />
                  <Route path="/pressure" element={<PressurePage />} />
                  <Route path="/runtime" element={<Navigate to="/runtime/traffic" replace />} />
                  <Route path="/runtime/:view" element={<RuntimePage />} />
                  <Route path="/diagnostics" element={<DiagnosticsPage />} />
                  <Route path="/snapshots" element={<SnapshotsPage />} />
                  <Route path="/settings" element={<SettingsPage />} />
                  <Route path="/migration" element={<Navigate to="/migration/preflight" replace />} />
                  <Route path="/migration/reports" element={<ReportsPage />} />
                  <Route path="/migration/:step" element={<MigrationPage />} />
                  <Route path="*" element={<Navigate to="/overview" replace />} />
                </Route>
              </Routes>
            </BrowserRouter>
          </I18nProvider>
        </MantineProvider>
      </QueryClientProvider>
    </PlatformProvider>
  );
}
