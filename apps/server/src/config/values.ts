import { readFileSync } from 'node:fs';
import { KindGuard } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { parse as parseToml } from 'smol-toml';
import { parseDuration } from './duration.ts';
import { ConfigSchema, OPTIONS, type ConfigValues, type OptionSpec } from './options.ts';

/** Reading raw configuration values (TOML, environment strings) and checking them against `ConfigSchema`. */

/** A listener address split into host and port (port 0 = any free port). */
export interface HostPort {
  host: string;
  port: number;
}

/** Every problem a configuration has, listed at once (the start exits with status 2). */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

function flatten(value: unknown, prefix: string, out: Map<string, unknown>): void {
  if (typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date)) {
    for (const [k, v] of Object.entries(value)) flatten(v, prefix ? `${prefix}.${k}` : k, out);
  } else {
    out.set(prefix, value);
  }
}

export function parseHostPort(text: string): HostPort | undefined {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:\s]*):(\d{1,5})$/.exec(text);
  if (!m) return undefined;
  const port = Number(m[2]);
  if (port > 65535) return undefined;
  const host = m[1]!.replace(/^\[|\]$/g, '');
  return { host: host === '' ? '0.0.0.0' : host, port };
}

/** Why `text` is not a listener address, for the error message. */
function addrProblem(text: string): string {
  const port = /:(\d+)$/.exec(text)?.[1];
  if (port !== undefined && Number(port) > 65535) return `port ${port} is out of range (0-65535)`;
  return 'must be host:port (port 0-65535; [::1]:port for IPv6)';
}

/** One raw value (TOML, or an env string) read as its key's schema says. */
export function coerce(spec: OptionSpec, raw: unknown, fromEnv: boolean): { value?: unknown; problem?: string } {
  const schema = spec.schema;
  if (KindGuard.IsBoolean(schema)) {
    if (typeof raw === 'boolean') return { value: raw };
    if (fromEnv && typeof raw === 'string' && /^(true|false|1|0)$/.test(raw)) return { value: raw === 'true' || raw === '1' };
    return { problem: 'must be a boolean' };
  }
  if (KindGuard.IsInteger(schema)) {
    const n = typeof raw === 'number' ? raw : fromEnv && typeof raw === 'string' && /^-?\d+$/.test(raw) ? Number(raw) : NaN;
    if (!Number.isSafeInteger(n)) return { problem: 'must be an integer' };
    if ((schema.minimum !== undefined && n < schema.minimum) || (schema.maximum !== undefined && n > schema.maximum)) {
      return { problem: `must be between ${schema.minimum} and ${schema.maximum}` };
    }
    return { value: n };
  }
  if (KindGuard.IsUnion(schema)) {
    const words = schema.anyOf.map((l) => String(l.const));
    if (typeof raw !== 'string' || !words.includes(raw)) return { problem: `must be one of ${words.join(', ')}` };
    return { value: raw };
  }
  if (schema.kind === 'duration') {
    if (typeof raw !== 'string' || parseDuration(raw) === undefined)
      return { problem: 'must be a duration such as "500ms", "10s" or "3m"' };
    return { value: raw };
  }
  if (schema.kind === 'addr') {
    if (typeof raw === 'string' && raw === '' && spec.default === '') return { value: raw };
    if (typeof raw !== 'string') return { problem: 'must be a "host:port" string' };
    if (!parseHostPort(raw)) return { problem: addrProblem(raw) };
    return { value: raw };
  }
  return typeof raw === 'string' ? { value: raw } : { problem: 'must be a string' };
}

/**
 * The checked values as `ConfigSchema` types them: every value was coerced
 * against its key's schema, so this only re-checks and narrows.
 */
export function typed(values: ReadonlyMap<string, unknown>): ConfigValues {
  const tree: Record<string, Record<string, unknown>> = {};
  for (const [key, value] of values) {
    const spec = OPTIONS.get(key)!;
    (tree[spec.section] ??= {})[spec.name] = value;
  }
  if (!Value.Check(ConfigSchema, tree)) {
    const first = [...Value.Errors(ConfigSchema, tree)][0];
    throw new Error(`configuration does not match its schema at ${first?.path}: ${first?.message}`);
  }
  return tree;
}

/** The file's keys, flattened to dotted names; problems name the file (and line, for bad TOML). */
export function readFile(file: string): Map<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError([`${file}: ${(err as Error).message}`]);
  }
  let tree: unknown;
  try {
    tree = parseToml(text);
  } catch (err) {
    const e = err as Error & { line?: number; column?: number };
    const at = e.line !== undefined ? `:${e.line}:${e.column ?? 0}` : '';
    throw new ConfigError([`${file}${at}: ${e.message.split('\n')[0]}`]);
  }
  const flat = new Map<string, unknown>();
  flatten(tree, '', flat);
  return flat;
}
