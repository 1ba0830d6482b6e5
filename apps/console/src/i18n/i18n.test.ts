import { describe, expect, it } from 'vitest';
import { interpolate, resolveLocale, translate, translateServer } from './i18n.tsx';
import { en, zhCN } from './messages.ts';

const placeholders = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe('message catalogue', () => {
  it('has every English key in Chinese, with the same placeholders, and nothing extra', () => {
    expect(Object.keys(zhCN).sort()).toEqual(Object.keys(en).sort());
    for (const [k, v] of Object.entries(en)) expect(placeholders(zhCN[k as keyof typeof en]), k).toEqual(placeholders(v));
  });

  it('leaves no Chinese entry in English (identifiers and units excepted)', () => {
    // Units, protocol words, the command name and the close_reason classes (values the evidence
    // shows) stay as they are; so do config keys and paths (dotted or slashed), commands in
    // `code`, names (products, systems, standards) and literal values a tool prints.
    const allowed =
      /^(ms|MiB|JSON|P50|P99|Bearer|Cookie|true|false|parleyctl|console|auth|protocol|backpressure|WuKongIM|Parley|Linux|macOS|Pebble|WebSocket|Markdown|Schema|SHA|ISO|Base|POST|LOCK|COMPLETE)$/;
    for (const [k, v] of Object.entries(zhCN)) {
      const text = v
        .replace(/`[^`]*`/g, '')
        .replace(/\{\w+\}/g, '')
        .replace(/--[a-z-]+/g, '')
        .replace(/[\w/-]*[._/][\w./-]*/g, '');
      const words = (text.match(/[A-Za-z]{2,}/g) ?? []).filter((w) => !allowed.test(w));
      expect(words, k).toEqual([]);
    }
  });

  it('picks the browser language it speaks, else English; an explicit choice wins', () => {
    expect(resolveLocale('auto', ['zh-TW', 'en'])).toBe('zh-CN');
    expect(resolveLocale('auto', ['fr-FR', 'en-GB'])).toBe('en');
    expect(resolveLocale('auto', ['de'])).toBe('en');
    expect(resolveLocale('en', ['zh-CN'])).toBe('en');
  });

  it('fills placeholders and translates the contract’s fixed server texts', () => {
    expect(interpolate('{n} of {total}', { n: 1, total: 2 })).toBe('1 of 2');
    expect(translate('zh-CN', 'controls.updatedAgo', { n: 3 })).toBe('3 秒前更新');
    expect(translateServer('zh-CN', 'runtime healthy')).toBe('运行正常');
    expect(translateServer('zh-CN', 'routes not ready')).toBe('routes 未就绪');
    expect(translateServer('zh-CN', 'storage/append pressure')).toBe('storage/append 压力');
    expect(translateServer('zh-CN', 'something new')).toBeUndefined();
    expect(translateServer('zh-CN', 'routes not ready, channel not ready')).toBe('routes 未就绪，channel 未就绪');
    expect(translateServer('zh-CN', 'routes not ready, something new')).toBeUndefined();
  });
});
