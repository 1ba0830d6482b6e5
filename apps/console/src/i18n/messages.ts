/**
 * The console's one message catalogue. English is the source; the Chinese
 * catalogue must have every key (the type says so). Units (ms, MiB, /s, %)
 * are the same in both languages; numbers and times are formatted for the
 * locale elsewhere (lib/format.ts).
 */
export { en, type MessageKey } from './en.ts';
export { zhCN } from './zh-cn.ts';
