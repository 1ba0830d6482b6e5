import { createContext, useContext, useMemo, type ReactNode } from 'react';
import { makeFormat, type Format } from '../lib/format.ts';
import { en, zhCN, type MessageKey } from './messages.ts';

export type Locale = 'en' | 'zh-CN';
export const LOCALES: readonly Locale[] = ['en', 'zh-CN'];

const CATALOGUES: Record<Locale, Record<MessageKey, string>> = { en, 'zh-CN': zhCN };

/** `{name}` placeholders filled from `vars`; unknown placeholders stay as they are. */
export function interpolate(template: string, vars?: Record<string, string | number>): string {
  if (!vars) return template;
  return template.replace(/\{(\w+)\}/g, (m, k: string) => (k in vars ? String(vars[k]) : m));
}

/** The explicit choice, else the first browser/OS language the console speaks, else English. */
export function resolveLocale(pref: 'auto' | Locale, languages: readonly string[]): Locale {
  if (pref !== 'auto') return pref;
  for (const l of languages) {
    const lower = l.toLowerCase();
    if (lower.startsWith('zh')) return 'zh-CN';
    if (lower.startsWith('en')) return 'en';
  }
  return 'en';
}

export function translate(locale: Locale, key: MessageKey, vars?: Record<string, string | number>): string {
  return interpolate(CATALOGUES[locale][key], vars);
}

/** Fixed texts of the top contract (verdict summaries, reasons, alert messages, hints). */
const SERVER_EXACT: Record<string, MessageKey> = {
  'runtime healthy': 'srv.runtimeHealthy',
  'runtime pressure detected': 'srv.pressureDetected',
  'cluster runtime is not ready': 'srv.notReady',
  'sendack error rate is high': 'srv.sendackHigh',
  'sendack error rate >= 5%': 'srv.sendackReason',
  'inflight work is at worker capacity': 'srv.hintWorkers',
  'queue has depth but no capacity': 'srv.hintNoCapacity',
  'queue depth is approaching capacity': 'srv.hintDepth',
  'top collector warming up': 'srv.warmingUp',
  'top snapshot provider is not configured': 'srv.topDisabled',
  'bench bearer token required': 'srv.tokenRequired',
  'gateway session errors observed': 'srv.sessionErrors',
  'check close_reason: auth means clients present bad tokens, protocol a client sending what the gateway cannot accept, backpressure clients that stop reading':
    'srv.hintSessionErrors',
};

/**
 * A text the server wrote, in the console's language when it is one of the
 * contract's fixed texts (`<part> not ready`, `<component>/<pool> pressure`
 * included); otherwise undefined, and the caller shows it as the server
 * wrote it, marked as raw server text.
 */
export function translateServer(locale: Locale, text: string): string | undefined {
  const key = SERVER_EXACT[text];
  if (key) return translate(locale, key);
  const part = /^(\S+) not ready$/.exec(text);
  if (part) return translate(locale, 'srv.partNotReady', { part: part[1]! });
  const pressure = /^(\S+) pressure$/.exec(text);
  if (pressure) return translate(locale, 'srv.pressureOf', { what: pressure[1]! });
  // `/readyz` joins the reasons of several parts down: "routes not ready, slots not ready".
  if (text.includes(', ')) {
    const parts = text.split(', ').map((p) => translateServer(locale, p));
    if (parts.every((p) => p !== undefined)) return parts.join(translate(locale, 'srv.listSeparator'));
  }
  return undefined;
}

export interface I18n {
  locale: Locale;
  t(key: MessageKey, vars?: Record<string, string | number>): string;
  f: Format;
}

const I18nContext = createContext<I18n | null>(null);

export function I18nProvider({ locale, children }: { locale: Locale; children: ReactNode }) {
  const value = useMemo<I18n>(() => ({ locale, t: (key, vars) => translate(locale, key, vars), f: makeFormat(locale) }), [locale]);
  return <I18nContext.Provider value={value}>{children}</I18nContext.Provider>;
}

export function useI18n(): I18n {
  const v = useContext(I18nContext);
  if (!v) throw new Error('useI18n outside I18nProvider');
  return v;
}

/** A server text: translated when known, else shown as written (marked `data-raw`, `lang="en"`). */
export function ServerText({ text }: { text: string }) {
  const { locale } = useI18n();
  const known = translateServer(locale, text);
  if (known !== undefined) return <>{known}</>;
  return (
    <span data-raw lang="en">
      {text}
    </span>
  );
}

/** An identifier from the server or the operator (node name, component, URL): never translated. */
export function Raw({ children }: { children: ReactNode }) {
  return <span data-raw>{children}</span>;
}
