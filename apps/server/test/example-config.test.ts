/**
 * `parley.example.toml` at the repository root documents every configuration
 * key: it must stay loadable, name every key that `config/options.ts`
 * declares (and no other), at its default, each with a comment above it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/config.ts';
import { OPTIONS } from '../src/config/options.ts';

const FILE = join(import.meta.dirname, '..', '..', '..', 'parley.example.toml');

describe('parley.example.toml', () => {
  it('loads, and sets every declared key to its default', () => {
    const config = loadConfig(FILE, {});
    const defaults = Object.fromEntries([...OPTIONS].map(([key, spec]) => [key, spec.default]));
    // Two empty defaults show what they resolve to; no API keys show as an empty list of names.
    expect(config.values).toEqual({ ...defaults, 'node.name': 'node-1', 'api.listen_addr': '127.0.0.1:5001', 'api.keys': '' });
  });

  it('names exactly the declared keys, each under a comment', () => {
    const tree = parse(readFileSync(FILE, 'utf8')) as Record<string, Record<string, unknown>>;
    const keys = Object.entries(tree).flatMap(([section, values]) => Object.keys(values).map((k) => `${section}.${k}`));
    expect(keys.sort()).toEqual([...OPTIONS.keys()].sort());
    const lines = readFileSync(FILE, 'utf8').split('\n');
    const uncommented = lines.filter((line, i) => /^\w+ = /.test(line) && !lines[i - 1]?.startsWith('# '));
    expect(uncommented).toEqual([]);
  });
});
